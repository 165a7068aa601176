package persistentvolume

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// syncVolume brings a volume's phase in line with its claim, and reclaims
// it once its claim is gone.
func (b *binder) syncVolume(ctx context.Context, name string) error {
	pv, ok := b.volumes.get(name)
	if !ok {
		return nil
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" { // unbound, or pre-bound and waiting for its claim
		return b.setVolumePhase(ctx, pv, corev1.VolumeAvailable)
	}
	claim, err := b.claimOf(ctx, pv)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		return b.release(ctx, pv)
	case claim.Spec.VolumeName == "":
		if volumeModeMismatch(pv, claim) {
			b.recorder.Event(pv, corev1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf(
				"Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			b.recorder.Event(claim, corev1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf(
				"Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", pv.Name))
			return nil
		}
		// Binding is half done (or a user pre-bound the volume): the
		// claim's sync finishes it; the claim's event queued it already.
		return nil
	case claim.Spec.VolumeName == pv.Name:
		return b.setVolumePhase(ctx, pv, corev1.VolumeBound)
	case pv.Annotations[volumeutil.AnnDynamicallyProvisioned] != "" && pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete:
		return b.release(ctx, pv) // the claim took another volume
	}
	return b.unbind(ctx, pv)
}

// claimOf returns the claim the volume's claimRef names, nil when it is
// gone (or replaced by a claim of another UID); a claim missing from the
// cache is looked up on the server before the volume is released.
func (b *binder) claimOf(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	ref := pv.Spec.ClaimRef
	c, ok := b.claims.get(ref.Namespace + "/" + ref.Name)
	if ok && c.UID == ref.UID {
		return c, nil
	}
	if pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed {
		return nil, nil
	}
	live, err := b.pvcs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get claim %s/%s of volume %s: %w", ref.Namespace, ref.Name, pv.Name, err)
	case live.UID != ref.UID:
		return nil, nil
	}
	return live, nil
}

// release marks the volume Released and reclaims it by its policy.
func (b *binder) release(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		if err := b.setVolumePhase(ctx, pv, corev1.VolumeReleased); err != nil {
			return err
		}
		pv, _ = b.volumes.get(pv.Name)
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRecycle:
		if pv.Status.Phase != corev1.VolumeFailed {
			return b.failVolume(ctx, pv, reasonVolumeFailedRecycle, "No recycler plugin found for the volume!")
		}
	case corev1.PersistentVolumeReclaimDelete:
		// A provisioned volume is its provisioner's to delete (it watches
		// for Released volumes it made); no deleter serves the others.
		if pv.Annotations[volumeutil.AnnDynamicallyProvisioned] == "" && pv.Status.Phase != corev1.VolumeFailed {
			return b.failVolume(ctx, pv, reasonVolumeFailedDelete,
				fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name))
		}
	}
	return nil // Retain: the volume stays Released for its administrator
}

func (b *binder) failVolume(ctx context.Context, pv *corev1.PersistentVolume, reason, msg string) error {
	npv := pv.DeepCopy()
	npv.Status.Phase, npv.Status.Message = corev1.VolumeFailed, msg
	if err := b.updateVolumeStatus(ctx, npv); err != nil {
		return err
	}
	b.recorder.Event(pv, corev1.EventTypeWarning, reason, msg)
	return nil
}

// unbind frees a volume whose claim is bound to another volume: the
// controller's own binding is undone; a user's pre-binding loses only the
// claim's UID.
func (b *binder) unbind(ctx context.Context, pv *corev1.PersistentVolume) error {
	npv := pv.DeepCopy()
	if _, ok := npv.Annotations[volumeutil.AnnBoundByController]; ok {
		npv.Spec.ClaimRef = nil
		delete(npv.Annotations, volumeutil.AnnBoundByController)
	} else {
		npv.Spec.ClaimRef.UID = ""
	}
	if err := b.updateVolume(ctx, npv); err != nil {
		return err
	}
	cur, _ := b.volumes.get(pv.Name)
	return b.setVolumePhase(ctx, cur, corev1.VolumeAvailable)
}
