package node

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func runtimeClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Kind: "RuntimeClass",
		ListKind: "RuntimeClassList", Singular: "runtimeclass",
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		// As kube-apiserver's strategy: a PUT must name a resourceVersion,
		// and a PUT of a missing class creates it.
		NoUnconditionalUpdate: true,
		New:                   func() runtime.Object { return &nodev1.RuntimeClass{} },
		NewList:               func() runtime.Object { return &nodev1.RuntimeClassList{} },
		Strategy: strategy.CreateOnUpdate[*nodev1.RuntimeClass]{Typed: strategy.Typed[*nodev1.RuntimeClass]{
			ValidateNew: validateRuntimeClass,
			ValidateChange: func(rc, old *nodev1.RuntimeClass) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
				return append(errs, strategy.Immutable(field.NewPath("handler"), rc.Handler, old.Handler)...)
			},
		}},
		Attrs: strategy.Attrs[*nodev1.RuntimeClass](true, nil),
		Table: printers.For("node.k8s.io", "RuntimeClass"),
	}
}

func validateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	errs := strategy.ValidateGenericMeta(&rc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	if rc.Handler == "" {
		errs = append(errs, field.Required(field.NewPath("handler"), ""))
	}
	for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
		if rc.Handler != "" {
			errs = append(errs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		errs = append(errs, validateOverhead(rc.Overhead.PodFixed, field.NewPath("overhead", "limits"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		errs = append(errs, podspec.ValidateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return errs
}

// validateOverhead checks the pod overhead as kube-apiserver checks a
// container's limits: resource names (standard container resources, or
// extended resources with a domain) and non-negative quantities, resource
// by resource in name order.
func validateOverhead(l corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range strategy.SortedKeys(l) {
		rp := p.Key(string(name))
		errs = append(errs, validateContainerResourceName(name, rp)...)
		if q := l[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(rp, q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

func validateContainerResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	s := string(name)
	errs := podspec.ValidateResourceName(name, p)
	switch {
	case !strings.Contains(s, "/"):
		if !standardContainerResource(s) {
			errs = append(errs, field.Invalid(p, s, "must be a standard resource for containers"))
		}
	case !podspec.IsNativeResource(name) && !extendedResourceName(s):
		errs = append(errs, field.Invalid(p, s, "doesn't follow extended resource name standard"))
	}
	return errs
}

func standardContainerResource(s string) bool {
	switch s {
	case "cpu", "memory", "ephemeral-storage":
		return true
	}
	return strings.HasPrefix(s, corev1.ResourceHugePagesPrefix)
}

// extendedResourceName: a domain-prefixed name outside kubernetes.io,
// not "requests."-prefixed, that is also a valid quota resource name.
func extendedResourceName(s string) bool {
	if strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
