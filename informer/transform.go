package informer

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/reflector"
)

// StripManagedFields is the default transform: it clears
// metadata.managedFields, which controllers rarely read and which often
// outweighs the rest of an object. It modifies obj in place and returns
// it, so it is only for objects the caller owns; the informer applies it
// to objects fresh from the decoder, before anybody else sees them.
func StripManagedFields[T metav1.Object](obj T) (T, error) {
	if len(obj.GetManagedFields()) > 0 {
		obj.SetManagedFields(nil)
	}
	return obj, nil
}

// NoTransform keeps objects as the server sent them. Set it as
// Options.Transform to keep managedFields (use NoTransform[metav1.Object]
// for FactoryOptions.Transform).
func NoTransform[T metav1.Object](obj T) (T, error) { return obj, nil }

// transformSink applies the transform and then the compactor to every
// object the reflector hands over, before it enters the queue (and so the
// cache and the handlers). Deleted objects are transformed but not
// compacted: they leave the cache.
type transformSink[T any] struct {
	next      reflector.Sink[T]
	transform func(T) (T, error)
	// compactor is nil for CompactNone.
	compactor *compactor
}

func (s transformSink[T]) Add(obj T) error {
	obj, err := s.applyAndCompact(obj)
	if err != nil {
		return err
	}
	return s.next.Add(obj)
}

func (s transformSink[T]) Update(obj T) error {
	obj, err := s.applyAndCompact(obj)
	if err != nil {
		return err
	}
	return s.next.Update(obj)
}

func (s transformSink[T]) Delete(obj T) error {
	obj, err := s.apply(obj)
	if err != nil {
		return err
	}
	return s.next.Delete(obj)
}

// Replace transforms into a new slice; list itself is left alone.
func (s transformSink[T]) Replace(list []T, resourceVersion string) error {
	out := make([]T, len(list))
	for i, obj := range list {
		t, err := s.applyAndCompact(obj)
		if err != nil {
			return err
		}
		out[i] = t
	}
	return s.next.Replace(out, resourceVersion)
}

func (s transformSink[T]) applyAndCompact(obj T) (T, error) {
	out, err := s.apply(obj)
	if err == nil && s.compactor != nil {
		s.compactor.Compact(out)
	}
	return out, err
}

func (s transformSink[T]) apply(obj T) (T, error) {
	out, err := s.transform(obj)
	if err != nil {
		return out, fmt.Errorf("informer: transform: %w", err)
	}
	return out, nil
}
