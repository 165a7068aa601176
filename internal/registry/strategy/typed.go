package strategy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Typed adapts the hooks of one kind, written against its Go type T (for
// example *corev1.Pod), to registry.Strategy. A nil hook does nothing (or
// finds nothing to complain about).
type Typed[T runtime.Object] struct {
	// PrepareCreate resets what a client may not set on create
	// (PrepareForCreate).
	PrepareCreate func(obj T)
	// PrepareUpdate carries over from old what an update of the main
	// resource may not change (PrepareForUpdate).
	PrepareUpdate func(obj, old T)
	// Defaults fills the kind's defaults (Default).
	Defaults func(obj T)
	// ValidateNew checks a new object (Validate).
	ValidateNew func(obj T) field.ErrorList
	// ValidateChange checks an update (ValidateUpdate).
	ValidateChange func(obj, old T) field.ErrorList
	// Warn returns the warnings of a valid create (old nil) or update
	// (registry.WarningsStrategy).
	Warn func(obj, old T) []string
}

func (s Typed[T]) PrepareForCreate(obj runtime.Object) {
	if o, ok := obj.(T); ok && s.PrepareCreate != nil {
		s.PrepareCreate(o)
	}
}

func (s Typed[T]) PrepareForUpdate(obj, old runtime.Object) {
	o, ok1 := obj.(T)
	p, ok2 := old.(T)
	if ok1 && ok2 && s.PrepareUpdate != nil {
		s.PrepareUpdate(o, p)
	}
}

func (s Typed[T]) Default(obj runtime.Object) {
	if o, ok := obj.(T); ok && s.Defaults != nil {
		s.Defaults(o)
	}
}

func (s Typed[T]) Validate(obj runtime.Object) field.ErrorList {
	o, ok := obj.(T)
	if !ok {
		return WrongType[T](obj)
	}
	if s.ValidateNew == nil {
		return nil
	}
	return s.ValidateNew(o)
}

func (s Typed[T]) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return ValidatePair(obj, old, s.ValidateChange)
}

func (s Typed[T]) WarningsOnCreate(obj runtime.Object) []string {
	o, ok := obj.(T)
	if !ok || s.Warn == nil {
		return nil
	}
	var none T
	return s.Warn(o, none)
}

func (s Typed[T]) WarningsOnUpdate(obj, old runtime.Object) []string {
	o, ok1 := obj.(T)
	p, ok2 := old.(T)
	if !ok1 || !ok2 || s.Warn == nil {
		return nil
	}
	return s.Warn(o, p)
}

// ValidatePair runs fn on obj and old as T; either of the wrong type is an
// error, and a nil fn accepts everything.
func ValidatePair[T runtime.Object](obj, old runtime.Object, fn func(obj, old T) field.ErrorList) field.ErrorList {
	o, ok := obj.(T)
	if !ok {
		return WrongType[T](obj)
	}
	p, ok := old.(T)
	if !ok {
		return WrongType[T](old)
	}
	if fn == nil {
		return nil
	}
	return fn(o, p)
}

// TypedStatus adapts the hooks of a subresource that writes part of the
// object (status, finalize, …) to registry.StatusStrategy, with the same
// type rules as Typed.
type TypedStatus[T runtime.Object] struct {
	// PrepareUpdate keeps everything of old but what the subresource
	// writes.
	PrepareUpdate func(obj, old T)
	// ValidateChange checks the update.
	ValidateChange func(obj, old T) field.ErrorList
}

func (s TypedStatus[T]) PrepareForUpdate(obj, old runtime.Object) {
	o, ok1 := obj.(T)
	p, ok2 := old.(T)
	if ok1 && ok2 && s.PrepareUpdate != nil {
		s.PrepareUpdate(o, p)
	}
}

func (s TypedStatus[T]) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return ValidatePair(obj, old, s.ValidateChange)
}

// WrongType is the error of a hook given an object that is not a T.
func WrongType[T runtime.Object](obj runtime.Object) field.ErrorList {
	var want T
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("strategy: got %T, want %T", obj, want))}
}

// CreateOnUpdate marks the strategies of kinds that a PUT may create, as
// Kubernetes' AllowCreateOnUpdate (registry.CreateOnUpdateStrategy).
type CreateOnUpdate[T runtime.Object] struct{ Typed[T] }

func (CreateOnUpdate[T]) AllowCreateOnUpdate() bool { return true }
