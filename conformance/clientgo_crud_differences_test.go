package conformance

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
)

// Where setpoint's build differs from kube-apiserver v1.37.2 in what the
// CRUD rows check. The rows state kube-apiserver's behaviour (and check it
// when run against the reference); against setpoint they check setpoint's
// present behaviour there and log the difference, so that a fix shows as
// a failure here: remove the entry then.

// statusLabelsDiffer: kube-apiserver writes the labels sent to the status
// subresource of these kinds (their status strategies reset the spec
// only); setpoint keeps the stored labels. (Namespaces, nodes, Services,
// ReplicaSets and Ingresses keep the sent metadata as kube-apiserver's do.)
var statusLabelsDiffer = map[string]string{
	"v1/pods": "kube-apiserver writes the labels sent to pods/status; setpoint keeps the stored ones",
}

// finalizerDiffers: kube-apiserver's StorageObjectInUseProtection
// admission puts a protection finalizer on every new object of these
// kinds; setpoint puts none, so a deleted one goes at once. (Volumes and
// claims get theirs since the volume controllers landed.)
var finalizerDiffers = map[string]string{
	"storage.k8s.io/v1/volumeattributesclasses": "kube-apiserver adds kubernetes.io/vac-protection to new volume attributes classes; setpoint adds none",
}

// finalizers are the finalizers a new object of the case carries (and
// why setpoint's differ, if they do).
func (c crudCase) finalizers() ([]string, string) {
	if c.protectionFinalizer == "" {
		return nil, ""
	}
	if why, ok := finalizerDiffers[c.testName()]; ok && !referenceMode() {
		return nil, why
	}
	return []string{c.protectionFinalizer}, ""
}

// releaseProtection removes the protection finalizer from deleted
// objects of the case, as the protection controllers of a cluster do
// when nothing uses them; they are then gone.
func releaseProtection(t *testing.T, ctx context.Context, c crudCase, ops crudOps, names ...string) {
	t.Helper()
	if f, _ := c.finalizers(); len(f) == 0 {
		return
	}
	for _, n := range names {
		o, err := ops.get(ctx, n)
		if apierrors.IsNotFound(err) {
			continue // a cluster's protection controller was faster
		}
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := meta.Accessor(o); m.GetDeletionTimestamp() == nil {
			t.Fatalf("%s: deleted, but no deletionTimestamp", n)
		}
		_, err = ops.patch(ctx, n, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("remove the protection finalizer of %s: %v", n, err)
		}
	}
}
