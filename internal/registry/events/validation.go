package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Length limits of an Event's fields.
const (
	reportingInstanceLimit = 128
	actionLimit            = 128
	reasonLimit            = 128
	noteLimit              = 1024
)

// ValidateCreate checks a new Event written through events.k8s.io/v1, on
// its core form: the checks every Event passes, then the new API's.
func ValidateCreate(e *corev1.Event) field.ErrorList {
	errs := ValidateLegacy(e)
	errs = append(errs, strategy.ValidateMeta(&e.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)...)
	errs = append(errs, validateSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	unset := func(name string, set bool) {
		if set {
			errs = append(errs, field.Invalid(field.NewPath(name), "", "needs to be unset"))
		}
	}
	unset("firstTimestamp", !e.FirstTimestamp.IsZero())
	unset("lastTimestamp", !e.LastTimestamp.IsZero())
	unset("count", e.Count != 0)
	unset("source", e.Source.Component != "" || e.Source.Host != "")
	return errs
}

// ValidateUpdate checks an update written through events.k8s.io/v1: all
// but the series (and metadata) of an Event is immutable.
func ValidateUpdate(e, old *corev1.Event) field.ErrorList {
	errs := ValidateLegacy(e)
	errs = append(errs, strategy.ValidateMetaUpdate(&e.ObjectMeta, &old.ObjectMeta)...)
	if !apiequality.Semantic.DeepEqual(e.Series, old.Series) {
		errs = append(errs, validateSeries(e)...)
	}
	immutable := func(name string, v, was any) {
		errs = append(errs, apivalidation.ValidateImmutableField(v, was, field.NewPath(name))...)
	}
	// kube-apiserver shows the object reference in its internal form.
	if !apiequality.Semantic.DeepEqual(e.InvolvedObject, old.InvolvedObject) {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject"), strategy.GoNamed{V: e.InvolvedObject}, apivalidation.FieldImmutableErrorMsg))
	}
	immutable("reason", e.Reason, old.Reason)
	immutable("message", e.Message, old.Message)
	immutable("source", e.Source, old.Source)
	immutable("firstTimestamp", e.FirstTimestamp, old.FirstTimestamp)
	immutable("lastTimestamp", e.LastTimestamp, old.LastTimestamp)
	immutable("count", e.Count, old.Count)
	immutable("reason", e.Reason, old.Reason)
	immutable("type", e.Type, old.Type)
	immutable("eventTime", e.EventTime, old.EventTime)
	immutable("action", e.Action, old.Action)
	immutable("related", e.Related, old.Related)
	immutable("reportingController", e.ReportingController, old.ReportingController)
	immutable("reportingInstance", e.ReportingInstance, old.ReportingInstance)
	return errs
}

func validateSeries(e *corev1.Event) field.ErrorList {
	if e.Series == nil {
		return nil
	}
	var errs field.ErrorList
	if e.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if e.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}

// ValidateLegacy makes the checks kube-apiserver makes of every Event,
// whichever API version writes it: the namespaces of the event and of its
// object agree, and an Event with an eventTime (of the new API) names its
// reporting controller and instance, action and reason, within their
// length limits.
func ValidateLegacy(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	mismatch := field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace")
	if e.EventTime.IsZero() {
		switch {
		case e.InvolvedObject.Namespace == "":
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, mismatch)
			}
		case e.Namespace != e.InvolvedObject.Namespace:
			errs = append(errs, mismatch)
		}
	} else {
		if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
			errs = append(errs, mismatch)
		}
		errs = append(errs, validateNewAPIFields(e)...)
	}
	for _, msg := range validation.IsDNS1123Subdomain(e.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), e.Namespace, msg))
	}
	return errs
}

func validateNewAPIFields(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if e.ReportingController == "" {
		errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
	}
	for _, msg := range validation.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(field.NewPath("reportingController"), e.ReportingController, msg))
	}
	required := func(name, v string, limit int) {
		if v == "" {
			errs = append(errs, field.Required(field.NewPath(name), ""))
		}
		if len(v) > limit {
			errs = append(errs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
		}
	}
	required("reportingInstance", e.ReportingInstance, reportingInstanceLimit)
	required("action", e.Action, actionLimit)
	required("reason", e.Reason, reasonLimit)
	if len(e.Message) > noteLimit {
		errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLimit)))
	}
	return errs
}
