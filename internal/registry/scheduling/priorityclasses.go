package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const (
	// HighestUserDefinablePriority is the largest value a class not named
	// "system-…" may have.
	HighestUserDefinablePriority = int32(1000000000)
	// SystemCriticalPriority is the value of system-cluster-critical.
	SystemCriticalPriority = 2 * HighestUserDefinablePriority
	systemPrefix           = "system-"
)

var priorityClassesGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}

// systemClasses are the classes kube-apiserver creates at start; no other
// class may take a "system-" name.
func systemClasses() []*schedulingv1.PriorityClass {
	lower := corev1.PreemptLowerPriority
	return []*schedulingv1.PriorityClass{{
		ObjectMeta:       metav1.ObjectMeta{Name: "system-node-critical"},
		Value:            SystemCriticalPriority + 1000,
		Description:      "Used for system critical pods that must not be moved from their current node.",
		PreemptionPolicy: &lower,
	}, {
		ObjectMeta:       metav1.ObjectMeta{Name: "system-cluster-critical"},
		Value:            SystemCriticalPriority,
		Description:      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
		PreemptionPolicy: &lower,
	}}
}

func priorityClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Kind: "PriorityClass",
		ListKind: "PriorityClassList", Singular: "priorityclass", ShortNames: []string{"pc"},
		StaticGeneration: true, // as kube-apiserver: 1, never bumped
		New:              func() runtime.Object { return &schedulingv1.PriorityClass{} },
		NewList:          func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		Strategy: strategy.Typed[*schedulingv1.PriorityClass]{
			Defaults:       defaultPriorityClass,
			ValidateNew:    validatePriorityClass,
			ValidateChange: validatePriorityClassUpdate,
		},
		Bootstrap: func() []runtime.Object {
			var out []runtime.Object
			for _, pc := range systemClasses() {
				out = append(out, pc)
			}
			return out
		},
		Attrs: strategy.Attrs[*schedulingv1.PriorityClass](true, nil),
		Table: printers.For("scheduling.k8s.io", "PriorityClass"),
	}
}

func defaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		p := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	errs := strategy.ValidateMeta(&pc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	if strings.HasPrefix(pc.Name, systemPrefix) {
		if err := checkSystemClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(*pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// checkSystemClass reports why pc is not exactly one of the system
// classes, nil when it is.
func checkSystemClass(pc *schedulingv1.PriorityClass) error {
	for _, sys := range systemClasses() {
		if sys.Name != pc.Name {
			continue
		}
		if sys.Value != pc.Value {
			return fmt.Errorf("value of %v PriorityClass must be %v", sys.Name, sys.Value)
		}
		if sys.GlobalDefault != pc.GlobalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", sys.Name, sys.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

func validatePreemptionPolicy(p corev1.PreemptionPolicy, path *field.Path) field.ErrorList {
	switch p {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, p, []string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)})}
}

func validatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&pc.ObjectMeta, &old.ObjectMeta)
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apivalidation.ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}
