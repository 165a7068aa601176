package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newPVC() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", ResourceVersion: "9"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: new("fast"),
			Resources:        corev1.VolumeResourceRequirements{Requests: list("storage", "1Gi")},
		},
	}
}

func TestPersistentVolumeClaimCreate(t *testing.T) {
	r := lookup(t, "persistentvolumeclaims")
	c := newPVC()
	c.Status.Phase = corev1.ClaimBound
	c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}
	expectValid(t, create(r, c))
	if c.Status.Phase != corev1.ClaimPending || *c.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("after create: phase %q mode %v", c.Status.Phase, *c.Spec.VolumeMode)
	}
	if ref := c.Spec.DataSourceRef; ref == nil || ref.Kind != "PersistentVolumeClaim" || ref.Name != "src" {
		t.Errorf("dataSourceRef not filled from dataSource: %+v", ref)
	}
	dropped := newPVC()
	dropped.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Foo", Name: "x"}
	expectValid(t, create(r, dropped))
	if dropped.Spec.DataSource != nil || dropped.Spec.DataSourceRef != nil {
		t.Errorf("a data source of another kind was kept: %+v", dropped.Spec)
	}

	for name, c := range map[string]struct {
		mutate func(*corev1.PersistentVolumeClaim)
		want   []string
	}{
		"no access modes": {func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }, []string{"spec.accessModes:FieldValueRequired"}},
		"unknown mode": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"Some"}
		},
			[]string{"spec.accessModes:FieldValueNotSupported"}},
		"no request":   {func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, []string{"spec.resources[storage]:FieldValueRequired"}},
		"zero request": {func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = list("storage", "0") }, []string{"spec.resources[storage]:FieldValueInvalid"}},
		"class":        {func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = new("Fast") }, []string{"spec.storageClassName:FieldValueInvalid"}},
		"volume mode":  {func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = new(corev1.PersistentVolumeMode("Raw")) }, []string{"spec.volumeMode:FieldValueNotSupported"}},
		"selector": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}}
		},
			[]string{"spec.selector.matchLabels:FieldValueInvalid"}},
		"data source ref": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "Snap", APIGroup: new("Bad_Group")}
		}, []string{"spec.dataSourceRef.name:FieldValueRequired", "spec.dataSourceRef.apiGroup:FieldValueInvalid",
			"spec.dataSource.name:FieldValueRequired", "spec.dataSource.apiGroup:FieldValueInvalid"}},
		"sources differ": {func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "a"}
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "b"}
		}, []string{"spec:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			pvc := newPVC()
			c.mutate(pvc)
			expectErrors(t, create(r, pvc), c.want...)
		})
	}
}

func TestPersistentVolumeClaimUpdate(t *testing.T) {
	r := lookup(t, "persistentvolumeclaims")
	old := newPVC()
	expectValid(t, create(r, old))

	upd := old.DeepCopy()
	upd.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	errs := update(r, upd, old)
	expectErrors(t, errs, "spec:FieldValueForbidden")
	if len(errs) > 0 && (!strings.HasPrefix(errs[0].Detail, pvcImmutableSpec+"\n@@") || !strings.Contains(errs[0].Detail, `-  "ReadWriteOnce"`)) {
		t.Errorf("message %q", errs[0].Detail)
	}

	// volumeName may be set once.
	named := old.DeepCopy()
	named.Spec.VolumeName = "pv1"
	expectValid(t, update(r, named, old))
	renamed := named.DeepCopy()
	renamed.Spec.VolumeName = "pv2"
	expectErrors(t, update(r, renamed, named), "spec:FieldValueForbidden")

	// A bound claim may grow, not shrink below its capacity.
	bound := named.DeepCopy()
	bound.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: list("storage", "1Gi")}
	grow := bound.DeepCopy()
	grow.Spec.Resources.Requests = list("storage", "2Gi")
	expectValid(t, update(r, grow, bound))
	shrink := bound.DeepCopy()
	shrink.Spec.Resources.Requests = list("storage", "500Mi")
	expectErrors(t, update(r, shrink, bound), "spec.resources.requests.storage:FieldValueForbidden")
	pending := old.DeepCopy()
	pending.Spec.Resources.Requests = list("storage", "2Gi")
	expectErrors(t, update(r, pending, old), "spec:FieldValueForbidden")

	// The class may be set once when it was unset, and must then agree
	// with the beta annotation.
	unset := newPVC()
	unset.Spec.StorageClassName = nil
	unset.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "old"}
	expectValid(t, create(r, unset))
	set := unset.DeepCopy()
	set.Spec.StorageClassName = new("old")
	expectValid(t, update(r, set, unset))
	other := unset.DeepCopy()
	other.Spec.StorageClassName = new("new")
	expectErrors(t, update(r, other, unset), "spec:FieldValueForbidden")
	ann := unset.DeepCopy()
	ann.Annotations[corev1.BetaStorageClassAnnotation] = "new"
	expectErrors(t, update(r, ann, unset), "metadata.annotations.volume.beta.kubernetes.io/storage-class:FieldValueInvalid")

	mode := old.DeepCopy()
	mode.Spec.VolumeMode = new(corev1.PersistentVolumeBlock)
	expectErrors(t, update(r, mode, old), "spec:FieldValueForbidden", "volumeMode:FieldValueInvalid")

	ws := r.Strategy.(registry.WarningsStrategy).WarningsOnCreate(unset)
	if len(ws) != 1 || !strings.HasPrefix(ws[0], "metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8") {
		t.Errorf("warnings %q", ws)
	}
}

func TestPersistentVolumeClaimStatus(t *testing.T) {
	r := lookup(t, "persistentvolumeclaims")
	old := newPVC()
	expectValid(t, create(r, old))
	st := old.DeepCopy()
	st.Spec.VolumeName = "ignored"
	st.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: list("storage", "1Gi"),
		AllocatedResources: list("storage", "1Gi"), AllocatedResourceStatuses: map[corev1.ResourceName]corev1.ClaimResourceStatus{
			"storage": corev1.PersistentVolumeClaimControllerResizeInProgress}}
	expectValid(t, updateStatus(r, st, old))
	if st.Spec.VolumeName != "" || st.Status.Phase != corev1.ClaimBound {
		t.Errorf("status update: volumeName %q phase %q", st.Spec.VolumeName, st.Status.Phase)
	}
	bad := st.DeepCopy()
	bad.Status.Capacity = list("storage", "-1")
	bad.Status.AllocatedResources = list("memory", "1Gi")
	bad.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{"storage": "Unknown"}
	expectErrors(t, updateStatus(r, bad, old), "status.capacity[storage]:FieldValueInvalid",
		"status.allocatedResources:FieldValueNotSupported", "status.allocatedResourceStatuses:FieldValueNotSupported")
}
