package networking

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const (
	// annotationIngressClass is the class annotation that predates
	// spec.ingressClassName.
	annotationIngressClass = "kubernetes.io/ingress.class"
)

var (
	ingressesGVR      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	ingressClassesGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

func ingressesResource() *registry.Resource {
	return &registry.Resource{
		Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress", ListKind: "IngressList",
		Singular: "ingress", ShortNames: []string{"ing"}, Namespaced: true,
		New:     func() runtime.Object { return &networkingv1.Ingress{} },
		NewList: func() runtime.Object { return &networkingv1.IngressList{} },
		Strategy: strategy.Typed[*networkingv1.Ingress]{
			PrepareCreate:  func(i *networkingv1.Ingress) { i.Status = networkingv1.IngressStatus{} },
			PrepareUpdate:  func(i, old *networkingv1.Ingress) { i.Status = old.Status },
			ValidateNew:    validateIngressCreate,
			ValidateChange: validateIngressUpdate,
			Warn:           ingressWarnings,
		},
		Status: strategy.TypedStatus[*networkingv1.Ingress]{
			PrepareUpdate: func(i, old *networkingv1.Ingress) {
				i.Spec = old.Spec
				// metadata changes stay, as in kube-apiserver: its status
				// strategy for the kind resets the spec only
			},
			ValidateChange: func(i, old *networkingv1.Ingress) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&i.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateIngressLoadBalancer(&i.Status.LoadBalancer, &old.Status.LoadBalancer,
					field.NewPath("status", "loadBalancer"))...)
			},
		},
		Admit: admitIngress,
		Attrs: strategy.Attrs[*networkingv1.Ingress](true, nil),
		Table: printers.For("networking.k8s.io", "Ingress"),
	}
}

// ingressWarnings warns of the deprecated class annotation on create (not
// on update), as kube-apiserver does.
func ingressWarnings(i, old *networkingv1.Ingress) []string {
	if _, ok := i.Annotations[annotationIngressClass]; old != nil || !ok {
		return nil
	}
	return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", annotationIngressClass)}
}

// admitIngress is kube-apiserver's DefaultIngressClass admission: a new
// ingress that names no class (neither spec.ingressClassName nor the
// class annotation) gets the class annotated as the default one; of
// several default classes, the newest (by name when created in the same
// second).
func admitIngress(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok || a.Operation != registry.Create || a.Subresource != "" || ing.Spec.IngressClassName != nil {
		return nil, nil
	}
	if _, ok := ing.Annotations[annotationIngressClass]; ok {
		return nil, nil
	}
	classes := env.Objects(ingressClassesGVR)
	if classes == nil {
		return nil, nil
	}
	list, err := classes.List(ctx, "", nil, nil)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("list ingress classes: %w", err))
	}
	var def *networkingv1.IngressClass
	for _, o := range list {
		c, ok := o.(*networkingv1.IngressClass)
		if !ok || c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] != "true" {
			continue
		}
		if def == nil || newer(c, def) {
			def = c
		}
	}
	if def != nil {
		ing.Spec.IngressClassName = new(def.Name)
	}
	return nil, nil
}

// newer orders default classes: the later created first, then by name.
func newer(a, b *networkingv1.IngressClass) bool {
	ta, tb := a.CreationTimestamp.UnixNano(), b.CreationTimestamp.UnixNano()
	if ta != tb {
		return ta > tb
	}
	return a.Name < b.Name
}
