package strategy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// ReplicasScale implements registry.ScaleAccessor for a kind with
// spec.replicas (a pointer, unset meaning 1), status.replicas and a label
// selector.
type ReplicasScale[T runtime.Object] struct {
	// Get returns spec.replicas, status.replicas and the selector string.
	Get func(obj T) (spec *int32, status int32, selector string, err error)
	// Set sets spec.replicas.
	Set func(obj T, replicas int32)
}

func (s ReplicasScale[T]) Replicas(obj runtime.Object) (int32, int32, string, error) {
	o, ok := obj.(T)
	if !ok {
		var want T
		return 0, 0, "", fmt.Errorf("strategy: scale of %T, want %T", obj, want)
	}
	spec, status, selector, err := s.Get(o)
	if err != nil {
		return 0, 0, "", fmt.Errorf("strategy: scale selector: %w", err)
	}
	n := int32(1)
	if spec != nil {
		n = *spec
	}
	return n, status, selector, nil
}

func (s ReplicasScale[T]) SetReplicas(obj runtime.Object, replicas int32) error {
	o, ok := obj.(T)
	if !ok {
		var want T
		return fmt.Errorf("strategy: scale of %T, want %T", obj, want)
	}
	if replicas < 0 {
		return fmt.Errorf("strategy: replicas %d: must be greater than or equal to 0", replicas)
	}
	s.Set(o, replicas)
	return nil
}
