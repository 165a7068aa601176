package persistentvolume

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// bind binds the volume and the claim to each other in kube's order:
// volume spec (claimRef), volume phase Bound, claim spec (volumeName and
// annotations), claim status (Bound, access modes, capacity). Each step
// writes only what differs, so a half-done binding is finished by the
// next sync of either object.
func (b *binder) bind(ctx context.Context, pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) error {
	if err := b.bindVolume(ctx, pv, c); err != nil {
		return err
	}
	pv, _ = b.volumes.get(pv.Name)
	if err := b.setVolumePhase(ctx, pv, corev1.VolumeBound); err != nil {
		return err
	}
	if err := b.bindClaim(ctx, pv, c); err != nil {
		return err
	}
	c, _ = b.claims.get(c.Namespace + "/" + c.Name)
	capacity := maps.Clone(pv.Spec.Capacity)
	if c.Status.Capacity != nil && c.Status.Phase == corev1.ClaimBound {
		capacity = c.Status.Capacity // the resize controller owns it now
	}
	return b.setClaimPhase(ctx, c, corev1.ClaimBound, func(st *corev1.PersistentVolumeClaimStatus) {
		st.AccessModes = pv.Spec.AccessModes
		st.Capacity = capacity
	})
}

func (b *binder) bindVolume(ctx context.Context, pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) error {
	ref := pv.Spec.ClaimRef
	if ref != nil && ref.UID == c.UID && ref.Name == c.Name && ref.Namespace == c.Namespace {
		return nil
	}
	npv := pv.DeepCopy()
	if ref == nil {
		metav1.SetMetaDataAnnotation(&npv.ObjectMeta, volumeutil.AnnBoundByController, "yes")
	}
	npv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion}
	return b.updateVolume(ctx, npv)
}

func (b *binder) bindClaim(ctx context.Context, pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) error {
	nc := c.DeepCopy()
	if nc.Spec.VolumeName != pv.Name {
		metav1.SetMetaDataAnnotation(&nc.ObjectMeta, volumeutil.AnnBoundByController, "yes")
		nc.Spec.VolumeName = pv.Name
	}
	metav1.SetMetaDataAnnotation(&nc.ObjectMeta, volumeutil.AnnBindCompleted, "yes")
	if equality.Semantic.DeepEqual(nc, c) {
		return nil
	}
	return b.updateClaim(ctx, nc)
}

// setClaimPhase writes the claim's phase (and what edit changes) when they
// differ from the stored status.
func (b *binder) setClaimPhase(ctx context.Context, c *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, edit func(*corev1.PersistentVolumeClaimStatus)) error {
	nc := c.DeepCopy()
	nc.Status.Phase = phase
	if edit != nil {
		edit(&nc.Status)
	}
	if equality.Semantic.DeepEqual(nc.Status, c.Status) {
		return nil
	}
	out, err := b.pvcs.Namespace(c.Namespace).UpdateStatus(ctx, nc, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	b.claims.store(out)
	return nil
}

func (b *binder) setVolumePhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) error {
	if pv.Status.Phase == phase {
		return nil
	}
	npv := pv.DeepCopy()
	npv.Status.Phase, npv.Status.Message, npv.Status.Reason = phase, "", ""
	return b.updateVolumeStatus(ctx, npv)
}

func (b *binder) updateVolumeStatus(ctx context.Context, pv *corev1.PersistentVolume) error {
	out, err := b.pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of volume %s: %w", pv.Name, err)
	}
	b.volumes.store(out)
	return nil
}

func (b *binder) updateVolume(ctx context.Context, pv *corev1.PersistentVolume) error {
	out, err := b.pvs.Update(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update volume %s: %w", pv.Name, err)
	}
	b.volumes.store(out)
	return nil
}

func (b *binder) updateClaim(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	out, err := b.pvcs.Namespace(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	b.claims.store(out)
	return nil
}
