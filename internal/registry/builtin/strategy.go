package builtin

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// typed adapts the hooks of one kind, written against its Go type T (for
// example *corev1.Pod), to registry.Strategy. A nil hook does nothing (or
// finds nothing to complain about).
//
// An object of another type is a programming error of the caller: the
// Prepare and Default hooks leave it alone and the Validate hooks reject it
// with an internal error, so it never reaches storage.
type typed[T runtime.Object] struct {
	prepareCreate  func(obj T)
	prepareUpdate  func(obj, old T)
	defaults       func(obj T)
	validate       func(obj T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
}

func (s typed[T]) PrepareForCreate(obj runtime.Object) {
	if o, ok := obj.(T); ok && s.prepareCreate != nil {
		s.prepareCreate(o)
	}
}

func (s typed[T]) PrepareForUpdate(obj, old runtime.Object) {
	o, ok1 := obj.(T)
	p, ok2 := old.(T)
	if ok1 && ok2 && s.prepareUpdate != nil {
		s.prepareUpdate(o, p)
	}
}

func (s typed[T]) Default(obj runtime.Object) {
	if o, ok := obj.(T); ok && s.defaults != nil {
		s.defaults(o)
	}
}

func (s typed[T]) Validate(obj runtime.Object) field.ErrorList {
	o, ok := obj.(T)
	if !ok {
		return wrongType[T](obj)
	}
	if s.validate == nil {
		return nil
	}
	return s.validate(o)
}

func (s typed[T]) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validatePair(obj, old, s.validateUpdate)
}

// validatePair runs fn on obj and old as T; either of the wrong type is
// an error, and a nil fn accepts everything.
func validatePair[T runtime.Object](obj, old runtime.Object, fn func(obj, old T) field.ErrorList) field.ErrorList {
	o, ok := obj.(T)
	if !ok {
		return wrongType[T](obj)
	}
	p, ok := old.(T)
	if !ok {
		return wrongType[T](old)
	}
	if fn == nil {
		return nil
	}
	return fn(o, p)
}

// typedStatus adapts the status-subresource hooks of one kind to
// registry.StatusStrategy, with the same type rules as typed.
type typedStatus[T runtime.Object] struct {
	prepareUpdate  func(obj, old T)
	validateUpdate func(obj, old T) field.ErrorList
}

func (s typedStatus[T]) PrepareForUpdate(obj, old runtime.Object) {
	o, ok1 := obj.(T)
	p, ok2 := old.(T)
	if ok1 && ok2 && s.prepareUpdate != nil {
		s.prepareUpdate(o, p)
	}
}

func (s typedStatus[T]) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validatePair(obj, old, s.validateUpdate)
}

func wrongType[T runtime.Object](obj runtime.Object) field.ErrorList {
	var want T
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("builtin: got %T, want %T", obj, want))}
}

// createOnUpdate marks the strategies of kinds that a PUT may create, as
// Kubernetes' AllowCreateOnUpdate (registry.CreateOnUpdateStrategy).
type createOnUpdate[T runtime.Object] struct{ typed[T] }

func (createOnUpdate[T]) AllowCreateOnUpdate() bool { return true }

var metadataPath = field.NewPath("metadata")

// validateMeta checks the metadata of a new object: name (by nameFn),
// namespace presence, labels, annotations, owner references, finalizers and
// managed fields.
func validateMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, namespaced, nameFn, metadataPath)
}

// validateMetaUpdate checks the metadata of an update: immutable system
// fields, labels, annotations, owner references, finalizers. An update
// that names no resourceVersion is unconditional (the server resolves it),
// so the check that requires one is made against old's.
func validateMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	if m.ResourceVersion == "" {
		c := *m
		c.ResourceVersion = old.ResourceVersion
		if c.ResourceVersion == "" {
			c.ResourceVersion = "0"
		}
		m = &c
	}
	errs := apivalidation.ValidateObjectMetaUpdate(m, old, metadataPath)
	return append(errs, apivalidation.ValidateFinalizers(m.Finalizers, metadataPath.Child("finalizers"))...)
}

// resetMetaForStatus gives a status update old's labels, annotations,
// finalizers and owner references: the status endpoint writes status only.
func resetMetaForStatus(m, old *metav1.ObjectMeta) {
	metav1.ResetObjectMetaForStatus(m, old)
}
