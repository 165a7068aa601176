package controllerutil

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/rest"
)

// OperationResult says what CreateOrUpdate did.
type OperationResult string

// The results of CreateOrUpdate.
const (
	OperationResultNone    OperationResult = "unchanged"
	OperationResultCreated OperationResult = "created"
	OperationResultUpdated OperationResult = "updated"
)

// Object is an API object: metadata plus runtime.Object.
type Object interface {
	metav1.Object
	runtime.Object
}

// CreateOrUpdate makes the object named by obj (name and, for namespaced
// resources, namespace) match what mutate sets; see the package
// documentation. res may be bound to a namespace or not; obj's namespace
// is used.
func CreateOrUpdate[T Object, L runtime.Object](ctx context.Context, res *rest.Resource[T, L], obj T, mutate func() error) (OperationResult, error) {
	name, ns := obj.GetName(), obj.GetNamespace()
	res = res.Namespace(ns)
	live, err := res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if err := runMutate(mutate, name, ns, obj); err != nil {
			return OperationResultNone, err
		}
		created, err := res.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			return OperationResultNone, fmt.Errorf("create %s/%s: %w", ns, name, err)
		}
		assign(obj, created)
		return OperationResultCreated, nil
	}
	if err != nil {
		return OperationResultNone, fmt.Errorf("get %s/%s: %w", ns, name, err)
	}
	assign(obj, live)
	before := obj.DeepCopyObject()
	if err := runMutate(mutate, name, ns, obj); err != nil {
		return OperationResultNone, err
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return OperationResultNone, nil
	}
	updated, err := res.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		return OperationResultNone, fmt.Errorf("update %s/%s: %w", ns, name, err)
	}
	assign(obj, updated)
	return OperationResultUpdated, nil
}

func runMutate(mutate func() error, name, ns string, obj metav1.Object) error {
	if err := mutate(); err != nil {
		return fmt.Errorf("mutate %s/%s: %w", ns, name, err)
	}
	if obj.GetName() != name || obj.GetNamespace() != ns {
		return fmt.Errorf("mutate %s/%s: changed the object's name or namespace to %s/%s", ns, name,
			obj.GetNamespace(), obj.GetName())
	}
	return nil
}

// assign overwrites *dst with *src (both pointers to the same struct
// type), so the caller's obj reflects the server's state.
func assign[T Object](dst, src T) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}
