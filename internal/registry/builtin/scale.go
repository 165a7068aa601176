package builtin

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// replicasScale implements registry.ScaleAccessor for a kind with
// spec.replicas (a pointer, unset meaning 1), status.replicas and a label
// selector.
type replicasScale[T runtime.Object] struct {
	// get returns spec.replicas, status.replicas and the selector string.
	get func(obj T) (spec *int32, status int32, selector string, err error)
	// set sets spec.replicas.
	set func(obj T, replicas int32)
}

func (s replicasScale[T]) Replicas(obj runtime.Object) (int32, int32, string, error) {
	o, ok := obj.(T)
	if !ok {
		var want T
		return 0, 0, "", fmt.Errorf("builtin: scale of %T, want %T", obj, want)
	}
	spec, status, selector, err := s.get(o)
	if err != nil {
		return 0, 0, "", fmt.Errorf("builtin: scale selector: %w", err)
	}
	n := int32(1)
	if spec != nil {
		n = *spec
	}
	return n, status, selector, nil
}

func (s replicasScale[T]) SetReplicas(obj runtime.Object, replicas int32) error {
	o, ok := obj.(T)
	if !ok {
		var want T
		return fmt.Errorf("builtin: scale of %T, want %T", obj, want)
	}
	if replicas < 0 {
		return fmt.Errorf("builtin: replicas %d: must be greater than or equal to 0", replicas)
	}
	s.set(o, replicas)
	return nil
}
