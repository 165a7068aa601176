package persistentvolume_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/manager"
)

var isConflict = apierrors.IsConflict

func (e *env) class(name string, mode storagev1.VolumeBindingMode, reclaim corev1.PersistentVolumeReclaimPolicy) {
	e.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "setpoint.dev/simulated",
		VolumeBindingMode: &mode, ReclaimPolicy: &reclaim, AllowVolumeExpansion: new(true), MountOptions: []string{"noatime"}}
	if _, err := e.scs.Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// The default class is installed once, as kind's; an Immediate class's
// claim gets a provisioned volume with the claim's size, modes and the
// class's policy and mount options, both end Bound with kube's
// annotations; deleting the claim deletes the provisioned volume.
func TestImmediateProvisioning(t *testing.T) {
	e := start(t)
	sc, _ := e.scs.Get(ctx, "standard", metav1.GetOptions{})
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" || sc.Provisioner != "setpoint.dev/simulated" ||
		*sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer || *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		t.Errorf("default class %+v", sc)
	}
	e.class("fast", storagev1.VolumeBindingImmediate, corev1.PersistentVolumeReclaimDelete)
	c := e.claim("data", "fast", "3Gi")
	c = e.waitClaimBound("data")
	pvName := "pvc-" + string(c.UID)
	if c.Spec.VolumeName != pvName || c.Annotations["pv.kubernetes.io/bind-completed"] != "yes" ||
		c.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" ||
		c.Annotations["volume.kubernetes.io/storage-provisioner"] != "setpoint.dev/simulated" ||
		c.Annotations["volume.beta.kubernetes.io/storage-provisioner"] != "setpoint.dev/simulated" {
		t.Errorf("claim %v %v", c.Spec.VolumeName, c.Annotations)
	}
	if c.Status.Capacity.Storage().String() != "3Gi" || !slices.Equal(c.Status.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		t.Errorf("claim status %+v", c.Status)
	}
	pv := e.waitVolumePhase(pvName, corev1.VolumeBound)
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != "setpoint.dev/simulated" || pv.Spec.ClaimRef.UID != c.UID ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || !slices.Equal(pv.Spec.MountOptions, []string{"noatime"}) ||
		pv.Spec.Capacity.Storage().String() != "3Gi" || pv.Spec.NodeAffinity != nil || pv.Spec.StorageClassName != "fast" ||
		!slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) || pv.Spec.HostPath == nil {
		t.Errorf("volume %+v", pv)
	}
	e.waitEvent("data", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'setpoint.dev/simulated' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.")
	e.waitEvent("data", "Provisioning", `External provisioner is provisioning volume for claim "default/data"`)
	e.waitEvent("data", "ProvisioningSucceeded", "Successfully provisioned volume "+pvName)

	if err := e.pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("claim and volume gone", func() bool { return e.getClaim("data") == nil && e.getVolume(pvName) == nil })

	// A claim created while no class is the default gets the default
	// class made later (retroactive assignment).
	if err := e.scs.Delete(ctx, "standard", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The binder reads classes from the manager's cache: a claim synced
	// before the cache saw the deletion would be given "standard", as
	// kube-controller-manager would in the same race.
	classes := manager.InformerFor[*storagev1.StorageClass](e.mgr, storagev1.SchemeGroupVersion.WithResource("storageclasses"), false)
	e.eventually("binder's cache without class standard", func() bool {
		_, ok, err := classes.Indexer().GetByKey("standard")
		return err == nil && !ok
	})
	if c := e.claim("late", "-", "1Gi"); c.Spec.StorageClassName != nil {
		t.Fatalf("claim got class %q without a default", *c.Spec.StorageClassName)
	}
	fast, _ := e.scs.Get(ctx, "fast", metav1.GetOptions{})
	metav1.SetMetaDataAnnotation(&fast.ObjectMeta, "storageclass.kubernetes.io/is-default-class", "true")
	if _, err := e.scs.Update(ctx, fast, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := e.waitClaimBound("late"); *c.Spec.StorageClassName != "fast" {
		t.Errorf("late claim class %q", *c.Spec.StorageClassName)
	}
	if n := e.metric("retroactive_storageclass_total", nil); n != 1 {
		t.Errorf("retroactive_storageclass_total %v", n)
	}
	if n := e.metric("pv_collector_bound_pvc_count", map[string]string{"namespace": ns, "storage_class": "fast"}); n != 1 {
		t.Errorf("pv_collector_bound_pvc_count %v", n)
	}
	if n := e.metric("pv_collector_total_pv_count", map[string]string{"plugin_name": "kubernetes.io/host-path", "volume_mode": "Filesystem"}); n != 1 {
		t.Errorf("pv_collector_total_pv_count %v", n)
	}
}

// WaitForFirstConsumer: no volume until the scheduler selects a node, then
// one with a node affinity to that node's hostname; the claim's protection
// finalizer holds it while a pod uses it, the volume stays Bound; once the
// pod is gone the claim and its volume go.
func TestWaitForFirstConsumer(t *testing.T) {
	e := start(t)
	e.claim("web", "-", "1Gi") // the default class, WaitForFirstConsumer
	e.waitEvent("web", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
	if c := e.getClaim("web"); c.Status.Phase != corev1.ClaimPending || *c.Spec.StorageClassName != "standard" ||
		!slices.Equal(c.Finalizers, []string{"kubernetes.io/pvc-protection"}) {
		t.Fatalf("claim %+v", c)
	}
	if list, _ := e.pvs.List(ctx, metav1.ListOptions{}); len(list.Items) != 0 {
		t.Fatalf("volume provisioned before a node was selected: %v", list.Items[0].Name)
	}
	e.pod("waiter", "", "web") // not scheduled
	e.waitEvent("web", "WaitForPodScheduled", "waiting for pod waiter to be scheduled")
	if err := e.pods.Delete(ctx, "waiter", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	e.node("n1")
	e.pod("web-0", "n1", "web")
	e.selectNode("web", "n1")
	c := e.waitClaimBound("web")
	pv := e.waitVolumePhase(c.Spec.VolumeName, corev1.VolumeBound)
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchExpressions[0].Key != "kubernetes.io/hostname" || !slices.Equal(terms[0].MatchExpressions[0].Values, []string{"n1-host"}) {
		t.Errorf("node affinity %+v", pv.Spec.NodeAffinity)
	}

	if err := e.pvcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clk.Step(3e9)
	c = e.getClaim("web")
	if c == nil || c.DeletionTimestamp == nil || !slices.Contains(c.Finalizers, "kubernetes.io/pvc-protection") {
		t.Fatalf("claim in use not held: %+v", c)
	}
	if pv := e.getVolume(pv.Name); pv == nil || pv.Status.Phase != corev1.VolumeBound {
		t.Fatalf("volume of a claim in use: %+v", pv)
	}
	if err := e.pods.Delete(ctx, "web-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	e.eventually("claim and volume gone", func() bool { return e.getClaim("web") == nil && e.getVolume(pv.Name) == nil })

	// A static volume of the class whose node affinity admits the selected
	// node is taken instead of provisioning; one for another node is not.
	e.node("n2")
	onNode := func(host string) func(*corev1.PersistentVolume) {
		return func(pv *corev1.PersistentVolume) {
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{host}}}}}}}
		}
	}
	e.volume("local-n1", "standard", "1Gi", onNode("n1-host"))
	e.volume("local-n2", "standard", "1Gi", onNode("n2-host"))
	e.waitVolumePhase("local-n2", corev1.VolumeAvailable)
	e.claim("local", "standard", "1Gi")
	e.waitEvent("local", "WaitForFirstConsumer", "")
	if c := e.getClaim("local"); c.Spec.VolumeName != "" {
		t.Fatalf("claim bound to %s before a node was selected", c.Spec.VolumeName)
	}
	e.selectNode("local", "n2")
	if c := e.waitClaimBound("local"); c.Spec.VolumeName != "local-n2" {
		t.Errorf("claim bound to %s, want local-n2", c.Spec.VolumeName)
	}
}

// Static volumes: the smallest that fits, of the claim's class, access
// modes, volume mode and selector; a volume pre-bound to a claim goes to
// it; a claim naming its volume gets it; Retain keeps a released volume,
// Delete without a provisioner fails it; a volume being deleted while
// bound is held by its finalizer.
func TestStaticBinding(t *testing.T) {
	e := start(t)
	block := corev1.PersistentVolumeBlock
	e.volume("big", "", "10Gi")
	e.volume("small", "", "2Gi")
	e.volume("tiny", "", "500Mi")
	e.volume("other", "gold", "2Gi")
	e.volume("rox", "", "2Gi", func(pv *corev1.PersistentVolume) {
		pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
	})
	e.volume("blk", "", "3Gi", func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = &block })
	e.volume("labeled", "", "4Gi", func(pv *corev1.PersistentVolume) { pv.Labels = map[string]string{"tier": "db"} })
	e.volume("reserved", "", "20Gi", func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: "pre"}
	})
	e.volume("deleter", "", "1Gi", func(pv *corev1.PersistentVolume) {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	})
	for _, n := range []string{"big", "small", "tiny", "reserved"} {
		e.waitVolumePhase(n, corev1.VolumeAvailable)
	}
	empty := func(c *corev1.PersistentVolumeClaim) {}
	e.claim("plain", "", "1Gi", empty)
	e.claim("sel", "", "1Gi", func(c *corev1.PersistentVolumeClaim) {
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}
	})
	e.claim("raw", "", "1Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = &block })
	e.claim("pre", "", "1Gi")
	e.claim("named", "", "1Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "big" })
	e.claim("rwx", "", "1Gi", func(c *corev1.PersistentVolumeClaim) {
		c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	})
	e.claim("none", "", "100Gi")
	for claim, vol := range map[string]string{"plain": "small", "sel": "labeled", "raw": "blk", "pre": "reserved", "named": "big", "rwx": "deleter"} {
		c := e.waitClaimBound(claim)
		if c.Spec.VolumeName != vol {
			t.Errorf("claim %s bound to %s, want %s", claim, c.Spec.VolumeName, vol)
		}
		pv := e.waitVolumePhase(vol, corev1.VolumeBound)
		_, claimByCtrl := c.Annotations["pv.kubernetes.io/bound-by-controller"]
		_, pvByCtrl := pv.Annotations["pv.kubernetes.io/bound-by-controller"]
		if claimByCtrl != (claim != "named") || pvByCtrl != (claim != "pre") || pv.Spec.ClaimRef.UID != c.UID {
			t.Errorf("%s/%s annotations %v %v", claim, vol, c.Annotations, pv.Annotations)
		}
	}
	e.waitEvent("none", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	if c := e.getClaim("none"); c.Status.Phase != corev1.ClaimPending {
		t.Errorf("claim none %s", c.Status.Phase)
	}

	// A bound volume being deleted is held by its finalizer.
	if err := e.pvs.Delete(ctx, "small", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clk.Step(3e9)
	if pv := e.getVolume("small"); pv == nil || pv.DeletionTimestamp == nil || pv.Status.Phase != corev1.VolumeBound {
		t.Fatalf("bound volume not held: %+v", pv)
	}
	// Retain: released, kept. Its claim's deletion then frees the volume
	// being deleted.
	for _, n := range []string{"named", "plain"} {
		if err := e.pvcs.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pv := e.waitVolumePhase("big", corev1.VolumeReleased)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "named" {
		t.Errorf("released volume lost its claimRef: %+v", pv.Spec.ClaimRef)
	}
	e.eventually("small gone", func() bool { return e.getVolume("small") == nil })
	// Delete without a provisioner: Failed.
	if err := e.pvcs.Delete(ctx, "rwx", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pv = e.waitVolumePhase("deleter", corev1.VolumeFailed)
	if pv.Status.Message != `error getting deleter volume plugin for volume "deleter": no deletable volume plugin matched` {
		t.Errorf("failed volume message %q", pv.Status.Message)
	}
	// A bound claim whose volume vanishes is Lost. The volume is deleted
	// first and its finalizer dropped afterwards: dropped first, the
	// protection controller may add it back to the live volume before the
	// delete, which then holds the bound volume for good.
	if err := e.pvs.Delete(ctx, "labeled", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("volume labeled released of its finalizer", func() bool {
		lost := e.getVolume("labeled")
		if lost == nil {
			return true
		}
		lost.Finalizers = nil
		_, err := e.pvs.Update(ctx, lost, metav1.UpdateOptions{})
		return err == nil || apierrors.IsNotFound(err)
	})
	e.eventually("claim sel lost", func() bool { return e.getClaim("sel").Status.Phase == corev1.ClaimLost })
	e.waitEvent("sel", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
	// A new claim fitting "big" does not get the released volume.
	e.claim("late", "", "5Gi")
	e.waitEvent("late", "FailedBinding", "")
	if c := e.getClaim("late"); c.Status.Phase != corev1.ClaimPending {
		t.Errorf("late claim %s to %s", c.Status.Phase, c.Spec.VolumeName)
	}
}

// Expansion on a class that allows it: the volume grows, the claim's
// status reports it as kube does; without a pod using the claim it waits
// for the node side (FileSystemResizePending).
func TestExpansion(t *testing.T) {
	e := start(t)
	e.class("grow", storagev1.VolumeBindingImmediate, corev1.PersistentVolumeReclaimDelete)
	e.node("n1")
	e.claim("used", "grow", "1Gi")
	e.claim("idle", "grow", "1Gi")
	e.waitClaimBound("used")
	e.waitClaimBound("idle")
	e.pod("app", "n1", "used")
	for _, n := range []string{"used", "idle"} {
		for {
			c := e.getClaim(n)
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resourceOf("3Gi")
			if _, err := e.pvcs.Update(ctx, c, metav1.UpdateOptions{}); err == nil {
				break
			} else if !isConflict(err) {
				t.Fatal(err)
			}
		}
	}
	var used *corev1.PersistentVolumeClaim
	e.eventually("used resized", func() bool {
		used = e.getClaim("used")
		return used.Status.Capacity.Storage().String() == "3Gi"
	})
	if used.Status.AllocatedResources.Storage().String() != "3Gi" || len(used.Status.AllocatedResourceStatuses) != 0 || len(used.Status.Conditions) != 0 {
		t.Errorf("used status %+v", used.Status)
	}
	if pv := e.getVolume(used.Spec.VolumeName); pv.Spec.Capacity.Storage().String() != "3Gi" {
		t.Errorf("volume capacity %s", pv.Spec.Capacity.Storage())
	}
	e.waitEvent("used", "FileSystemResizeSuccessful", "")
	var idle *corev1.PersistentVolumeClaim
	e.eventually("idle pending node resize", func() bool {
		idle = e.getClaim("idle")
		return idle.Status.AllocatedResourceStatuses[corev1.ResourceStorage] == corev1.PersistentVolumeClaimNodeResizePending
	})
	if idle.Status.Capacity.Storage().String() != "1Gi" || idle.Status.AllocatedResources.Storage().String() != "3Gi" ||
		len(idle.Status.Conditions) != 1 || idle.Status.Conditions[0].Type != corev1.PersistentVolumeClaimFileSystemResizePending ||
		idle.Status.Conditions[0].Message != "Waiting for user to (re-)start a pod to finish file system resize of volume on node." {
		t.Errorf("idle status %+v", idle.Status)
	}
	if pv := e.getVolume(idle.Spec.VolumeName); pv.Spec.Capacity.Storage().String() != "3Gi" {
		t.Errorf("idle volume capacity %s", pv.Spec.Capacity.Storage())
	}
	// A pod using it finishes the resize.
	e.pod("late", "n1", "idle")
	e.eventually("idle resized", func() bool { return e.getClaim("idle").Status.Capacity.Storage().String() == "3Gi" })
}
