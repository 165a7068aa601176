package persistentvolume

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// Event reasons of the binder, as kube-controller-manager's.
const (
	reasonFailedBinding        = "FailedBinding"
	reasonVolumeMismatch       = "VolumeMismatch"
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonWaitForPodScheduled  = "WaitForPodScheduled"
	reasonExternalProvisioning = "ExternalProvisioning"
	reasonProvisioningFailed   = "ProvisioningFailed"
	reasonVolumeFailedDelete   = "VolumeFailedDelete"
	reasonVolumeFailedRecycle  = "VolumeFailedRecycle"
)

// syncClaim brings one claim closer to Bound.
func (b *binder) syncClaim(ctx context.Context, key string) error {
	c, ok := b.claims.get(key)
	if !ok {
		return nil
	}
	if _, done := c.Annotations[volumeutil.AnnBindCompleted]; done {
		return b.syncBoundClaim(ctx, c)
	}
	return b.syncUnboundClaim(ctx, c)
}

func (b *binder) syncUnboundClaim(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	if c.Spec.VolumeName != "" {
		return b.syncRequestedVolume(ctx, c)
	}
	class, err := b.class(volumeutil.ClaimClass(c))
	if err != nil {
		return err
	}
	delay := volumeutil.IsDelayBinding(class)
	pv := b.findBestMatch(c, delay)
	if pv != nil {
		return b.bind(ctx, pv, c)
	}
	if updated, err := b.assignDefaultClass(ctx, c); err != nil || updated {
		return err
	}
	_, selected := c.Annotations[volumeutil.AnnSelectedNode]
	switch {
	case delay && !selected:
		b.waitingEvent(c)
	case volumeutil.ClaimClass(c) != "":
		return b.provision(ctx, c, class)
	default:
		b.recorder.Event(c, corev1.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
}

// waitingEvent tells why a WaitForFirstConsumer claim waits: for a pod to
// use it, or for the pods using it to be scheduled.
func (b *binder) waitingEvent(c *corev1.PersistentVolumeClaim) {
	pods, _ := b.podInf.Indexer().ByIndex(volumeutil.PodClaimIndex, c.Namespace+"/"+c.Name)
	var names []string
	for _, p := range pods {
		if p.Spec.NodeName == "" && !volumeutil.PodTerminated(p) {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	switch len(names) {
	case 0:
		b.recorder.Event(c, corev1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case 1:
		b.recorder.Event(c, corev1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", names[0]))
	default:
		b.recorder.Event(c, corev1.EventTypeNormal, reasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(names, ",")))
	}
}

// syncRequestedVolume binds a claim that names its volume.
func (b *binder) syncRequestedVolume(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	pv, ok := b.volumes.get(c.Spec.VolumeName)
	switch {
	case !ok:
		return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
	case pv.Spec.ClaimRef == nil:
		if err := satisfies(pv, c); err != nil {
			b.recorder.Event(c, corev1.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", pv.Name, err))
			return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
		}
		return b.bind(ctx, pv, c)
	case volumeutil.BoundToClaim(pv, c):
		return b.bind(ctx, pv, c)
	}
	b.recorder.Event(c, corev1.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", pv.Name))
	if _, byController := c.Annotations[volumeutil.AnnBoundByController]; byController {
		return fmt.Errorf("invalid binding of claim %s/%s to volume %q: volume already claimed by %s/%s",
			c.Namespace, c.Name, pv.Name, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	}
	return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
}

// syncBoundClaim checks a claim whose binding completed once.
func (b *binder) syncBoundClaim(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	if c.Spec.VolumeName == "" {
		return b.loseClaim(ctx, c, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
	}
	pv, ok := b.volumes.get(c.Spec.VolumeName)
	switch {
	case !ok:
		return b.loseClaim(ctx, c, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == c.UID:
		return b.bind(ctx, pv, c)
	}
	return b.loseClaim(ctx, c, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")
}

func (b *binder) loseClaim(ctx context.Context, c *corev1.PersistentVolumeClaim, reason, msg string) error {
	if c.Status.Phase == corev1.ClaimLost {
		return nil
	}
	if err := b.setClaimPhase(ctx, c, corev1.ClaimLost, nil); err != nil {
		return err
	}
	b.recorder.Event(c, corev1.EventTypeWarning, reason, msg)
	return nil
}

// class returns the named class, nil when name is "" or no such class.
func (b *binder) class(name string) (*storagev1.StorageClass, error) {
	if name == "" {
		return nil, nil
	}
	sc, ok, err := b.scInf.Indexer().GetByKey(name)
	if err != nil || !ok {
		return nil, err
	}
	return sc, nil
}

// assignDefaultClass gives a claim created without a class (before a
// default class existed) the default class, as kube's retroactive default
// StorageClass assignment.
func (b *binder) assignDefaultClass(ctx context.Context, c *corev1.PersistentVolumeClaim) (bool, error) {
	if c.Spec.StorageClassName != nil {
		return false, nil
	}
	if _, ok := c.Annotations[volumeutil.AnnBetaStorageClass]; ok {
		return false, nil
	}
	def := b.defaultClass()
	if def == nil {
		return false, nil
	}
	nc := c.DeepCopy()
	nc.Spec.StorageClassName = new(def.Name)
	if err := b.updateClaim(ctx, nc); err != nil {
		b.metrics.retroactiveKO.Inc()
		return false, err
	}
	b.metrics.retroactive.Inc()
	return true, nil
}

// defaultClass is the newest class annotated default (by name on a tie),
// as the DefaultStorageClass admission picks it.
func (b *binder) defaultClass() *storagev1.StorageClass {
	var best *storagev1.StorageClass
	for _, sc := range b.scInf.Indexer().List() {
		if !volumeutil.IsDefaultClass(sc) {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	return best
}

// provision asks the class's provisioner for a volume: the claim gets the
// storage-provisioner annotations the provisioner waits for.
func (b *binder) provision(ctx context.Context, c *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	if class == nil {
		b.recorder.Event(c, corev1.EventTypeWarning, reasonProvisioningFailed,
			fmt.Sprintf("storageclass.storage.k8s.io %q not found", volumeutil.ClaimClass(c)))
		return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
	}
	if strings.HasPrefix(class.Provisioner, "kubernetes.io/") {
		// In-tree provisioners' names (kubernetes.io/no-provisioner of
		// local volumes among them): no in-tree plugin is served.
		b.recorder.Event(c, corev1.EventTypeWarning, reasonProvisioningFailed, "no volume plugin matched name: "+class.Provisioner)
		return b.setClaimPhase(ctx, c, corev1.ClaimPending, nil)
	}
	if c.Annotations[volumeutil.AnnStorageProvisioner] != class.Provisioner || c.Annotations[volumeutil.AnnBetaStorageProvisioner] != class.Provisioner {
		nc := c.DeepCopy()
		if nc.Annotations == nil {
			nc.Annotations = map[string]string{}
		}
		nc.Annotations[volumeutil.AnnStorageProvisioner] = class.Provisioner
		nc.Annotations[volumeutil.AnnBetaStorageProvisioner] = class.Provisioner
		if err := b.updateClaim(ctx, nc); err != nil {
			b.recorder.Event(c, corev1.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
			return err
		}
	}
	b.recorder.Event(c, corev1.EventTypeNormal, reasonExternalProvisioning, fmt.Sprintf(
		"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. "+
			"If volume creation is delayed, please verify that the provisioner is running and correctly registered.", class.Provisioner))
	return nil
}
