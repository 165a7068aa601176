package storage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest"
)

func TestStorageClassDefaultsAndUpdate(t *testing.T) {
	r := registrytest.Find(t, Resources(), "storageclasses")
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "example.com/foo"}
	registrytest.ExpectValid(t, registrytest.Create(r, sc))
	if *sc.ReclaimPolicy != "Delete" || *sc.VolumeBindingMode != "Immediate" {
		t.Errorf("defaults: %v %v", *sc.ReclaimPolicy, *sc.VolumeBindingMode)
	}
	upd := sc.DeepCopy()
	upd.AllowVolumeExpansion = new(true)
	upd.MountOptions = []string{"ro"}
	registrytest.ExpectValid(t, registrytest.Update(r, upd, sc))
	upd.Provisioner = "Bad Name"
	registrytest.ExpectErrors(t, registrytest.Update(r, upd, sc), "provisioner:FieldValueInvalid", "provisioner:FieldValueInvalid")
	registrytest.ExpectFields(t, r, sc, fields.Set{"metadata.name": "fast", "metadata.namespace": ""})
}

func TestCSIDriverGeneration(t *testing.T) {
	r := registrytest.Find(t, Resources(), "csidrivers")
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}
	registrytest.ExpectValid(t, registrytest.Create(r, d))
	same := d.DeepCopy()
	registrytest.ExpectValid(t, registrytest.Update(r, same, d))
	if same.Generation != 0 {
		t.Errorf("generation after a no-op update: %d", same.Generation)
	}
	changed := d.DeepCopy()
	changed.Spec.StorageCapacity = new(true)
	registrytest.ExpectValid(t, registrytest.Update(r, changed, d))
	if changed.Generation != 1 {
		t.Errorf("generation after a spec change: %d", changed.Generation)
	}
}

func TestCSINodeStatus(t *testing.T) {
	r := registrytest.Find(t, Resources(), "csinodes")
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "3"}}
	n.Status.StorageHealth = []storagev1.StorageHealth{{Name: "csi.example.com"}}
	registrytest.ExpectValid(t, registrytest.Create(r, n))
	if n.Status.StorageHealth != nil {
		t.Errorf("create kept status: %v", n.Status)
	}
	// CSIVolumeHealth is off: status.storageHealth is dropped.
	st := n.DeepCopy()
	st.Status.StorageHealth = []storagev1.StorageHealth{{Name: "Bad Name"}}
	registrytest.ExpectValid(t, registrytest.UpdateStatus(r, st, n))
	if st.Status.StorageHealth != nil {
		t.Errorf("status update kept storageHealth: %v", st.Status)
	}
	// An object that has it (written before) is checked.
	old := n.DeepCopy()
	old.Status.StorageHealth = []storagev1.StorageHealth{{Name: "csi.example.com"}}
	st = old.DeepCopy()
	st.Status.StorageHealth = append(st.Status.StorageHealth, storagev1.StorageHealth{Name: "csi.example.com",
		HealthConditions: []storagev1.StorageHealthCondition{{Status: "Fine"}}})
	registrytest.ExpectErrors(t, registrytest.UpdateStatus(r, st, old),
		"status.storageHealth[1]:FieldValueDuplicate", "status.storageHealth[1].healthConditions[0].status:FieldValueNotSupported",
		"status.storageHealth[1].healthConditions[0].reason:FieldValueRequired")
}

func TestVolumeAttachmentInlineSpec(t *testing.T) {
	r := registrytest.Find(t, Resources(), "volumeattachments")
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1"}}
	va.Spec.Source.InlineVolumeSpec = &corev1.PersistentVolumeSpec{}
	registrytest.ExpectErrors(t, registrytest.Create(r, va),
		"spec.source.inlineVolumeSpec.csi:FieldValueRequired", "spec.source.inlineVolumeSpec.accessModes:FieldValueRequired",
		"spec.source.inlineVolumeSpec:FieldValueRequired")
}
