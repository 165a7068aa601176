package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
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

func validateEvent(e *corev1.Event) field.ErrorList {
	errs := strategy.ValidateGenericMeta(&e.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateEventBody(e)...)
}

// validateEventBody checks what core/v1 checks of an event: that the
// involved object's namespace agrees with the event's (an event about a
// cluster-scoped object lives in "default", or in "kube-system" for events
// with an eventTime).
func validateEventBody(e *corev1.Event) field.ErrorList {
	p := field.NewPath("involvedObject", "namespace")
	ns, ins := e.Namespace, e.InvolvedObject.Namespace
	var ok bool
	switch {
	case ins != "":
		ok = ns == ins
	case e.EventTime.IsZero():
		ok = ns == metav1.NamespaceNone || ns == metav1.NamespaceDefault
	default:
		ok = ns == metav1.NamespaceDefault || ns == metav1.NamespaceSystem
	}
	if !ok {
		return field.ErrorList{field.Invalid(p, ins, "does not match event.namespace")}
	}
	return nil
}
