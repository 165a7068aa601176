package controllerutil

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/client"
)

// CreateOrUpdateObject is CreateOrUpdate through the one client (as
// controller-runtime's controllerutil.CreateOrUpdate): it reads the
// object named by obj with c.Get (from the cache: a deep copy), creates it
// when missing, else updates it when mutate changed it. A stale cache
// makes the update conflict; the reconcile is then retried.
func CreateOrUpdateObject(ctx context.Context, c client.Client, obj client.Object, mutate func() error) (OperationResult, error) {
	name, ns := obj.GetName(), obj.GetNamespace()
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		if err := runMutate(mutate, name, ns, obj); err != nil {
			return OperationResultNone, err
		}
		if err := c.Create(ctx, obj); err != nil {
			return OperationResultNone, fmt.Errorf("create %s/%s: %w", ns, name, err)
		}
		return OperationResultCreated, nil
	}
	if err != nil {
		return OperationResultNone, fmt.Errorf("get %s/%s: %w", ns, name, err)
	}
	before := obj.DeepCopyObject()
	if err := runMutate(mutate, name, ns, obj); err != nil {
		return OperationResultNone, err
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return OperationResultNone, nil
	}
	if err := c.Update(ctx, obj); err != nil {
		return OperationResultNone, fmt.Errorf("update %s/%s: %w", ns, name, err)
	}
	return OperationResultUpdated, nil
}
