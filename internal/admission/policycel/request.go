package policycel

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	kauthorizer "k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Request is the admission request of a, as a policy sees it: resource
// and kind are the ones the policy matched (gvr, gvk), the request's own
// in requestResource and requestKind.
func Request(a *registry.Attributes, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) *admissionv1.AdmissionRequest {
	dryRun := a.DryRun
	rgvr, rgvk := RequestGVR(a), RequestGVK(a)
	u := a.User
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: map[string]authenticationv1.ExtraValue{}}
	for k, v := range u.Extra {
		info.Extra[k] = authenticationv1.ExtraValue(v)
	}
	return &admissionv1.AdmissionRequest{
		Kind:               metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Resource:           metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
		SubResource:        a.Subresource,
		RequestKind:        &metav1.GroupVersionKind{Group: rgvk.Group, Version: rgvk.Version, Kind: rgvk.Kind},
		RequestResource:    &metav1.GroupVersionResource{Group: rgvr.Group, Version: rgvr.Version, Resource: rgvr.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		UserInfo:           info,
		DryRun:             &dryRun,
		Options:            runtime.RawExtension{Object: options(a)},
	}
}

// options is the request's options object, as kube-apiserver passes it.
func options(a *registry.Attributes) runtime.Object {
	switch a.Operation {
	case registry.Create:
		return &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}}
	case registry.Update:
		return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}}
	case registry.Delete:
		return &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}}
	}
	return nil
}

// RequestGVR is the resource a writes.
func RequestGVR(a *registry.Attributes) schema.GroupVersionResource {
	if a.Resource == nil {
		return schema.GroupVersionResource{}
	}
	return a.Resource.GVR()
}

// RequestGVK is the kind a writes (of the subresource when it has its own).
func RequestGVK(a *registry.Attributes) schema.GroupVersionKind {
	if a.Resource == nil {
		return schema.GroupVersionKind{}
	}
	if a.Subresource != "" {
		if s := a.Resource.Subresource(a.Subresource); s != nil && s.Kind.Kind != "" {
			return s.Kind
		}
	}
	return a.Resource.GVK()
}

// ToMap converts an object to the JSON-like map CEL sees, with apiVersion
// and kind set to gvk when the object carries none (nil obj: nil).
func ToMap(obj runtime.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.Object
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("converting %T: %w", obj, err)
		}
	}
	if _, ok := m["kind"]; !ok && !gvk.Empty() {
		cp := make(map[string]any, len(m)+2)
		for k, v := range m {
			cp[k] = v
		}
		cp["apiVersion"], cp["kind"] = gvk.GroupVersion().String(), gvk.Kind
		m = cp
	}
	return m, nil
}

// NamespaceObject is the namespace as namespaceObject shows it: metadata
// (without managedFields and owner references), spec and status.
func NamespaceObject(ns *corev1.Namespace) *corev1.Namespace {
	if ns == nil {
		return nil
	}
	m := ns.ObjectMeta
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, GenerateName: m.GenerateName, Namespace: m.Namespace, Labels: m.Labels,
			Annotations: m.Annotations, UID: m.UID, CreationTimestamp: m.CreationTimestamp,
			DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds, DeletionTimestamp: m.DeletionTimestamp,
			Generation: m.Generation, ResourceVersion: m.ResourceVersion, Finalizers: m.Finalizers,
		},
		Spec:   ns.Spec,
		Status: ns.Status,
	}
}

// UserInfo is u as the CEL authorizer library takes it.
func UserInfo(u registry.UserInfo) user.Info {
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// Authorizer adapts the server's authorizer to the CEL authorizer library.
func Authorizer(a authorizer.Authorizer) kauthorizer.UnconditionalAuthorizer {
	if a == nil {
		return nil
	}
	return authzAdapter{a}
}

type authzAdapter struct{ a authorizer.Authorizer }

func (z authzAdapter) Authorize(ctx context.Context, k kauthorizer.Attributes) (kauthorizer.Decision, string, error) {
	var u authorizer.User
	if ki := k.GetUser(); ki != nil {
		u = authorizer.User{Name: ki.GetName(), UID: ki.GetUID(), Groups: ki.GetGroups(), Extra: ki.GetExtra()}
	}
	attrs := authorizer.Attributes{
		User: u, Verb: k.GetVerb(), ResourceRequest: k.IsResourceRequest(),
		Namespace: k.GetNamespace(), APIGroup: k.GetAPIGroup(), APIVersion: k.GetAPIVersion(),
		Resource: k.GetResource(), Subresource: k.GetSubresource(), Name: k.GetName(), Path: k.GetPath(),
	}
	d, reason, err := z.a.Authorize(ctx, attrs)
	switch d {
	case authorizer.DecisionAllow:
		return kauthorizer.DecisionAllow, reason, err
	case authorizer.DecisionDeny:
		return kauthorizer.DecisionDeny, reason, err
	}
	return kauthorizer.DecisionNoOpinion, reason, err
}
