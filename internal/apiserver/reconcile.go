package apiserver

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// errRecreate aborts the update of a bootstrap object that has to be
// deleted and created anew.
var errRecreate = errors.New("recreate")

// reconcileAttempts bounds the retries of one object that keeps
// appearing and disappearing while it is reconciled.
const reconcileAttempts = 3

// reconcileBootstrap brings the stored bootstrap object of want up to date
// (registry.Resource.Reconcile): an update when the resource changes it,
// none when it does not, a delete (of the object read, by UID) and a
// create of want when it asks for recreation. An object deleted or
// created meanwhile is tried again.
func reconcileBootstrap(ctx context.Context, store *objects.Store, res *registry.Resource, want runtime.Object) error {
	m := objectMeta(want)
	ns, name := m.GetNamespace(), m.GetName()
	for range reconcileAttempts {
		var uid types.UID
		update := func(cur runtime.Object) error {
			uid = objectMeta(cur).GetUID()
			if res.Reconcile(cur, want.DeepCopyObject()) {
				return errRecreate
			}
			return nil
		}
		_, err := store.Mutate(ctx, ns, name, update, objects.WriteOptions{})
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			err = createBootstrap(ctx, store, want)
		case errors.Is(err, errRecreate):
			err = recreateBootstrap(ctx, store, want, uid)
		}
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("reconcile %s %s: %w", res.Resource, name, err)
		}
	}
	return fmt.Errorf("reconcile %s %s: it keeps changing", res.Resource, name)
}

func createBootstrap(ctx context.Context, store *objects.Store, want runtime.Object) error {
	_, err := store.Create(ctx, objectMeta(want).GetNamespace(), want.DeepCopyObject(), objects.WriteOptions{})
	return err
}

// recreateBootstrap deletes the object read (uid) and creates want.
func recreateBootstrap(ctx context.Context, store *objects.Store, want runtime.Object, uid types.UID) error {
	m := objectMeta(want)
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if _, _, err := store.Delete(ctx, m.GetNamespace(), m.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return createBootstrap(ctx, store, want)
}
