package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func eventsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "events", Kind: "Event", ListKind: "EventList", Singular: "event",
		ShortNames: []string{"ev"}, Namespaced: true,
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		NoGarbageCollection: true, // as kube-apiserver: events are owned by nothing
		New:                 func() runtime.Object { return &corev1.Event{} },
		NewList:             func() runtime.Object { return &corev1.EventList{} },
		Strategy: strategy.CreateOnUpdate[*corev1.Event]{Typed: strategy.Typed[*corev1.Event]{
			ValidateNew: validateEvent,
			ValidateChange: func(e, old *corev1.Event) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&e.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateEventBody(e)...)
			},
		}},
		Attrs: strategy.Attrs(true, eventFields),
		Table: printers.For("", "Event"),
	}
}

func eventFields(e *corev1.Event, set fields.Set) {
	o := &e.InvolvedObject
	set["involvedObject.kind"] = o.Kind
	set["involvedObject.namespace"] = o.Namespace
	set["involvedObject.name"] = o.Name
	set["involvedObject.uid"] = string(o.UID)
	set["involvedObject.apiVersion"] = o.APIVersion
	set["involvedObject.resourceVersion"] = o.ResourceVersion
	set["involvedObject.fieldPath"] = o.FieldPath
	set["reason"] = e.Reason
	set["reportingComponent"] = e.ReportingController
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	set["source"] = source
	set["type"] = e.Type
}

// validateEvent checks a new core/v1 event as kube-apiserver does: the
// metadata by the generic rules every write gets (any name that is a path
// segment), then validateEventBody.
func validateEvent(e *corev1.Event) field.ErrorList {
	errs := strategy.ValidateGenericMeta(&e.ObjectMeta, true, path.ValidatePathSegmentName)
	return append(errs, validateEventBody(e)...)
}

// Limits of the fields of an event with an eventTime, as kube-apiserver's.
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

// validateEventBody checks what core/v1 checks of an event: that the
// involved object's namespace agrees with the event's (an event about a
// cluster-scoped object lives in "default", or in "kube-system" for events
// with an eventTime, which need not agree otherwise); an event with an eventTime must name its reporting
// controller (reported as "source" in core/v1), instance, action and
// reason, within their limits; the namespace must be a DNS subdomain.
func validateEventBody(e *corev1.Event) field.ErrorList {
	p := field.NewPath("involvedObject", "namespace")
	ns, ins := e.Namespace, e.InvolvedObject.Namespace
	var ok bool
	switch {
	case !e.EventTime.IsZero():
		// As kube-apiserver: an event with an eventTime about a
		// namespaced object may live anywhere.
		ok = ins != "" || ns == metav1.NamespaceDefault || ns == metav1.NamespaceSystem
	case ins != "":
		ok = ns == ins
	default:
		ok = ns == metav1.NamespaceNone || ns == metav1.NamespaceDefault
	}
	var errs field.ErrorList
	if !ok {
		errs = append(errs, field.Invalid(p, ins, "does not match event.namespace"))
	}
	if !e.EventTime.IsZero() {
		errs = append(errs, validateReportedEvent(e)...)
	}
	for _, msg := range validation.IsDNS1123Subdomain(ns) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ns, msg))
	}
	return errs
}

// validateReportedEvent checks the fields an event with an eventTime must
// have.
func validateReportedEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	source := field.NewPath("source")
	if e.ReportingController == "" {
		errs = append(errs, field.Required(source, ""))
	}
	for _, msg := range validation.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(source, e.ReportingController, msg))
	}
	for _, f := range []struct {
		name, value string
		limit       int
	}{
		{"reportingInstance", e.ReportingInstance, eventReportingInstanceLimit},
		{"action", e.Action, eventActionLimit},
		{"reason", e.Reason, eventReasonLimit},
	} {
		if f.value == "" {
			errs = append(errs, field.Required(field.NewPath(f.name), ""))
		}
		if len(f.value) > f.limit {
			errs = append(errs, field.Invalid(field.NewPath(f.name), "", fmt.Sprintf("can have at most %d characters", f.limit)))
		}
	}
	if len(e.Message) > eventNoteLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %d characters", eventNoteLimit)))
	}
	return errs
}
