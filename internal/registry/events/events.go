package events

import (
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func eventsResource() *registry.Resource {
	return &registry.Resource{
		Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", ListKind: "EventList",
		Singular: "event", ShortNames: []string{"ev"}, Namespaced: true,
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		NoGarbageCollection: true, // as kube-apiserver: events are owned by nothing
		New:                 func() runtime.Object { return &eventsv1.Event{} },
		NewList:             func() runtime.Object { return &eventsv1.EventList{} },
		View:                storageView(),
		Strategy: strategy.CreateOnUpdate[*eventsv1.Event]{Typed: strategy.Typed[*eventsv1.Event]{
			ValidateNew: func(e *eventsv1.Event) field.ErrorList { return ValidateCreate(ToCore(e)) },
			ValidateChange: func(e, old *eventsv1.Event) field.ErrorList {
				return ValidateUpdate(ToCore(e), ToCore(old))
			},
		}},
		Attrs: strategy.Attrs(true, eventFields),
		Table: printers.For("events.k8s.io", "Event"),
	}
}

// eventFields are the field labels events.k8s.io/v1 selects on (it maps
// them onto the core Event's: regarding.* is involvedObject.*,
// reportingController is reportingComponent).
func eventFields(e *eventsv1.Event, set fields.Set) {
	r := &e.Regarding
	set["regarding.kind"] = r.Kind
	set["regarding.namespace"] = r.Namespace
	set["regarding.name"] = r.Name
	set["regarding.uid"] = string(r.UID)
	set["regarding.apiVersion"] = r.APIVersion
	set["regarding.resourceVersion"] = r.ResourceVersion
	set["regarding.fieldPath"] = r.FieldPath
	set["reason"] = e.Reason
	set["reportingController"] = e.ReportingController
	set["type"] = e.Type
}
