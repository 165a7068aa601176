package core

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// replicationControllersResource serves replicationcontrollers with status
// and scale. A delete without a propagation policy orphans the pods, as
// core/v1 always did.
func replicationControllersResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "replicationcontrollers", Kind: "ReplicationController",
		ListKind: "ReplicationControllerList", Singular: "replicationcontroller",
		ShortNames: []string{"rc"}, Categories: []string{"all"}, Namespaced: true,
		New:             func() runtime.Object { return &corev1.ReplicationController{} },
		NewList:         func() runtime.Object { return &corev1.ReplicationControllerList{} },
		OrphanByDefault: true, // as core/v1: a delete orphans the pods unless told otherwise
		Strategy: strategy.Typed[*corev1.ReplicationController]{
			PrepareCreate: func(rc *corev1.ReplicationController) {
				rc.Status = corev1.ReplicationControllerStatus{}
				podspec.DropDisabledTemplateFields(rc.Spec.Template, nil)
			},
			PrepareUpdate: func(rc, old *corev1.ReplicationController) {
				rc.Status = old.Status
				podspec.DropDisabledTemplateFields(rc.Spec.Template, old.Spec.Template)
			},
			Defaults:    defaultReplicationController,
			ValidateNew: validateReplicationController,
			ValidateChange: func(rc, old *corev1.ReplicationController) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateReplicationControllerSpec(&rc.Spec)...)
			},
			Warn: replicationControllerWarnings,
		},
		// As kube-apiserver, the status endpoint keeps the spec and
		// writes status and metadata.
		Status: strategy.TypedStatus[*corev1.ReplicationController]{
			PrepareUpdate: func(rc, old *corev1.ReplicationController) { rc.Spec = old.Spec },
			ValidateChange: func(rc, old *corev1.ReplicationController) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateReplicationControllerStatus(&rc.Status)...)
			},
		},
		Scale: strategy.ReplicasScale[*corev1.ReplicationController]{
			Get: func(rc *corev1.ReplicationController) (*int32, int32, string, error) {
				return rc.Spec.Replicas, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String(), nil
			},
			Set: func(rc *corev1.ReplicationController, n int32) { rc.Spec.Replicas = &n },
		},
		Attrs: strategy.Attrs(true, func(rc *corev1.ReplicationController, set fields.Set) {
			set["status.replicas"] = strconv.Itoa(int(rc.Status.Replicas))
		}),
		Table: printers.For("", "ReplicationController"),
	}
}

// defaultReplicationController defaults as core/v1: an empty selector and
// empty labels take the template's labels, replicas is 1, and the pod
// template gets the pod defaults.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = new(int32(1))
	}
	if rc.Spec.Template != nil {
		podspec.DefaultPodSpec(&rc.Spec.Template.Spec)
	}
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	errs := strategy.ValidateMeta(&rc.ObjectMeta, true, rcName)
	return append(errs, validateReplicationControllerSpec(&rc.Spec)...)
}

// rcName checks a replication controller's name as a DNS subdomain; the
// length limit is worded in bytes, as kube-apiserver's declarative
// validation of the name words it.
func rcName(name string, prefix bool) []string {
	msgs := apivalidation.NameIsDNSSubdomain(name, prefix)
	for i, m := range msgs {
		if m == validation.MaxLenError(validation.DNS1123SubdomainMaxLength) {
			msgs[i] = fmt.Sprintf("must be no more than %d bytes", validation.DNS1123SubdomainMaxLength)
		}
	}
	return msgs
}

func validateReplicationControllerSpec(s *corev1.ReplicationControllerSpec) field.ErrorList {
	sp := strategy.SpecPath
	var errs field.ErrorList
	if labels.SelectorFromSet(s.Selector).Empty() {
		errs = append(errs, field.Required(sp.Child("selector"), ""))
	}
	errs = append(errs, validateRCTemplate(s.Template, s.Selector, sp.Child("template"))...)
	// kube-apiserver checks these declaratively, after the rest.
	if s.Replicas == nil {
		errs = append(errs, field.Required(sp.Child("replicas"), ""))
	} else {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.Replicas), sp.Child("replicas"))...)
	}
	return append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), sp.Child("minReadySeconds"))...)
}

// validateRCTemplate requires a template whose labels the selector
// matches, whose pods restart Always and have no deadline.
func validateRCTemplate(t *corev1.PodTemplateSpec, selector map[string]string, p *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if sel := labels.SelectorFromSet(selector); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validateTemplateSpec(t, p)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// validateReplicationControllerStatus checks the counters are not
// negative and are consistent, in kube-apiserver's order.
func validateReplicationControllerStatus(s *corev1.ReplicationControllerStatus) field.ErrorList {
	sp := strategy.StatusPath
	var errs field.ErrorList
	for _, c := range []struct {
		name string
		n    int64
	}{
		{"replicas", int64(s.Replicas)}, {"fullyLabeledReplicas", int64(s.FullyLabeledReplicas)},
		{"readyReplicas", int64(s.ReadyReplicas)}, {"availableReplicas", int64(s.AvailableReplicas)},
		{"observedGeneration", s.ObservedGeneration},
	} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(c.n, sp.Child(c.name))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.FullyLabeledReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}
