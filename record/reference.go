package record

import (
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// NewScheme returns a scheme with the stable built-in kinds of k8s.io/api
// registered (core, apps, batch, autoscaling, coordination, networking,
// policy, rbac, scheduling, storage, discovery, certificates,
// admissionregistration). Add your own types to it for objects whose
// TypeMeta is empty.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme, coordinationv1.AddToScheme, networkingv1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, schedulingv1.AddToScheme, storagev1.AddToScheme,
		discoveryv1.AddToScheme, certificatesv1.AddToScheme, admissionregistrationv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("record: build scheme: %v", err)) // static registration: a programming error
		}
	}
	return s
}

// GetReference builds the reference an event names as its involved object:
// apiVersion and kind from obj's TypeMeta when both are set, else from the
// scheme; name, namespace, uid and resourceVersion from its metadata. A
// *corev1.ObjectReference is returned as a copy of itself.
func GetReference(scheme *runtime.Scheme, obj runtime.Object) (*corev1.ObjectReference, error) {
	if obj == nil {
		return nil, errors.New("nil object")
	}
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		return ref.DeepCopy(), nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		kinds, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			return nil, fmt.Errorf("kind of %T unknown (set its TypeMeta or register it in the scheme): %w", obj, err)
		}
		gvk = kinds[0]
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("metadata of %T: %w", obj, err)
	}
	if m.GetName() == "" {
		return nil, fmt.Errorf("%s object has no name", gvk.Kind)
	}
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return &corev1.ObjectReference{
		APIVersion: apiVersion, Kind: kind,
		Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(),
	}, nil
}
