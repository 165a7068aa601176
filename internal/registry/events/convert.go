package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// ToCore converts an events.k8s.io/v1 Event to the core/v1 Event it is
// stored as. The result shares no memory with e.
func ToCore(e *eventsv1.Event) *corev1.Event {
	e = e.DeepCopy()
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Related:             e.Related,
		Action:              e.Action,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if s := e.Series; s != nil {
		out.Series = &corev1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
	}
	out.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	return out
}

// FromCore converts a stored core/v1 Event to events.k8s.io/v1, the
// inverse of ToCore. The result shares no memory with e.
func FromCore(e *corev1.Event) *eventsv1.Event {
	e = e.DeepCopy()
	out := &eventsv1.Event{
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if s := e.Series; s != nil {
		out.Series = &eventsv1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
	}
	out.SetGroupVersionKind(eventsv1.SchemeGroupVersion.WithKind("Event"))
	return out
}

// storageView is the events.k8s.io/v1 view of the core Events' storage.
func storageView() *registry.StorageView {
	return &registry.StorageView{
		Group: "", Version: "v1", Resource: "events", Kind: "Event",
		New: func() runtime.Object { return &corev1.Event{} },
		ToStorage: func(obj runtime.Object) (runtime.Object, error) {
			e, ok := obj.(*eventsv1.Event)
			if !ok {
				return nil, fmt.Errorf("events: store %T, want *v1.Event of events.k8s.io", obj)
			}
			return ToCore(e), nil
		},
		FromStorage: func(stored runtime.Object) (runtime.Object, error) {
			e, ok := stored.(*corev1.Event)
			if !ok {
				return nil, fmt.Errorf("events: stored %T, want a core *v1.Event", stored)
			}
			return FromCore(e), nil
		},
	}
}
