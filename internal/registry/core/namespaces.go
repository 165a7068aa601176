package core

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func namespacesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "namespaces", Kind: "Namespace", ListKind: "NamespaceList", Singular: "namespace",
		ShortNames: []string{"ns"},
		// as kube-apiserver: no deletecollection of namespaces
		NoDeleteCollection: true,
		NoGeneration:       true, // as kube-apiserver: no metadata.generation
		// as kube-apiserver: a DELETE answers the namespace, Terminating
		// or gone
		ReturnDeletedObject: true,
		PreconditionFailed:  "Precondition failed", // kube-apiserver's namespace storage checks them itself
		New:                 func() runtime.Object { return &corev1.Namespace{} },
		NewList:             func() runtime.Object { return &corev1.NamespaceList{} },
		Strategy: namespaceStrategy{strategy.Typed[*corev1.Namespace]{
			PrepareCreate:  prepareNamespaceCreate,
			PrepareUpdate:  prepareNamespaceUpdate,
			Defaults:       defaultNamespace,
			ValidateNew:    validateNamespace,
			ValidateChange: validateNamespaceUpdate,
		}},
		Status: strategy.TypedStatus[*corev1.Namespace]{
			PrepareUpdate: func(ns, old *corev1.Namespace) {
				ns.Spec = old.Spec
				// metadata changes stay, as in kube-apiserver: its status
				// strategy for the kind resets the spec only
			},
			ValidateChange: validateNamespaceStatusUpdate,
		},
		Subresources: []registry.Subresource{{
			Name: "finalize", Kind: corev1.SchemeGroupVersion.WithKind("Namespace"), Verbs: []string{"update"},
			Update: NamespaceFinalize(), ResetFields: [][]string{{"status"}},
		}},
		Bootstrap: bootstrapNamespaces,
		Attrs: strategy.Attrs(false, func(ns *corev1.Namespace, set fields.Set) {
			set["status.phase"] = string(ns.Status.Phase)
		}),
		Table: printers.For("", "Namespace"),
	}
}

// namespaceStrategy adds the spec.finalizers deletion hold
// (registry.DeletionHolder) to the namespace hooks.
type namespaceStrategy struct {
	strategy.Typed[*corev1.Namespace]
}

// PrepareForDelete turns the namespace Terminating.
func (namespaceStrategy) PrepareForDelete(obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}

// HoldsDeletion reports whether spec.finalizers still holds the namespace
// (the namespace controller empties it through namespaces/finalize once the
// namespace's contents are gone).
func (namespaceStrategy) HoldsDeletion(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}

// NamespaceFinalize returns the write logic of the namespaces/finalize
// subresource: an update through it changes spec.finalizers only, and
// everything else is kept from the stored object.
func NamespaceFinalize() registry.StatusStrategy {
	return strategy.TypedStatus[*corev1.Namespace]{
		PrepareUpdate: func(ns, old *corev1.Namespace) {
			finalizers := ns.Spec.Finalizers
			meta := ns.ObjectMeta
			*ns = *old.DeepCopy()
			ns.ObjectMeta.ResourceVersion = meta.ResourceVersion
			ns.Spec.Finalizers = finalizers
		},
		ValidateChange: func(ns, old *corev1.Namespace) field.ErrorList {
			errs := strategy.ValidateMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateSpecFinalizers(ns.Spec.Finalizers)...)
		},
	}
}

// prepareNamespaceCreate makes the namespace Active and requires the
// "kubernetes" finalizer in spec.finalizers.
func prepareNamespaceCreate(ns *corev1.Namespace) {
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
}

// prepareNamespaceUpdate keeps old's status and spec.finalizers (changed
// through namespaces/finalize only).
func prepareNamespaceUpdate(ns, old *corev1.Namespace) {
	ns.Spec.Finalizers = old.Spec.Finalizers
	ns.Status = old.Status
}

// defaultNamespace labels the namespace with its name
// (kubernetes.io/metadata.name) and defaults the phase to Active.
func defaultNamespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	errs := strategy.ValidateMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName)
	return append(errs, validateSpecFinalizers(ns.Spec.Finalizers)...)
}

func validateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList {
	return strategy.ValidateMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)
}

// validateSpecFinalizers requires each finalizer to be a qualified name,
// and a name without a domain to be a standard one ("kubernetes"); the
// errors name the list, not the entry, as kube-apiserver's.
func validateSpecFinalizers(finalizers []corev1.FinalizerName) field.ErrorList {
	var errs field.ErrorList
	p := strategy.SpecPath.Child("finalizers")
	for _, f := range finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), p)...)
		if !strings.Contains(string(f), "/") && f != corev1.FinalizerKubernetes {
			errs = append(errs, field.Invalid(p, f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// validateNamespaceStatusUpdate ties the phase to deletion: Active while
// the namespace lives, Terminating once its deletion began.
func validateNamespaceStatusUpdate(ns, old *corev1.Namespace) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)
	pp := field.NewPath("status", "Phase") // sic: kube-apiserver's path
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			errs = append(errs, field.Invalid(pp, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		errs = append(errs, field.Invalid(pp, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return errs
}
