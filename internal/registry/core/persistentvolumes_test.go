package core

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newPV() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1", ResourceVersion: "8"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    list("storage", "1Gi"),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/export"},
			},
		},
	}
}

func TestPersistentVolumeDefaults(t *testing.T) {
	r := lookup(t, "persistentvolumes")
	pv := newPV()
	pv.Status.Phase = corev1.VolumeBound
	before := time.Now().Add(-time.Second)
	expectValid(t, create(r, pv))
	s := pv.Spec
	if s.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *s.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("defaults: %q %v", s.PersistentVolumeReclaimPolicy, *s.VolumeMode)
	}
	if pv.Status.Phase != corev1.VolumePending || pv.Status.LastPhaseTransitionTime == nil || pv.Status.LastPhaseTransitionTime.Time.Before(before) {
		t.Errorf("status after create: %+v", pv.Status)
	}
	rbd := newPV()
	rbd.Spec.NFS, rbd.Spec.RBD = nil, &corev1.RBDPersistentVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i"}
	expectValid(t, create(r, rbd))
	if g := rbd.Spec.RBD; g.RBDPool != "rbd" || g.RadosUser != "admin" || g.Keyring != "/etc/ceph/keyring" {
		t.Errorf("rbd defaults: %+v", g)
	}
	host := newPV()
	host.Spec.NFS, host.Spec.HostPath = nil, &corev1.HostPathVolumeSource{Path: "/data"}
	expectValid(t, create(r, host))
	if host.Spec.HostPath.Type == nil || *host.Spec.HostPath.Type != corev1.HostPathUnset {
		t.Errorf("hostPath type %v", host.Spec.HostPath.Type)
	}
}

func TestPersistentVolumeValidation(t *testing.T) {
	r := lookup(t, "persistentvolumes")
	affinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}},
	}}}}
	for name, c := range map[string]struct {
		mutate func(*corev1.PersistentVolume)
		want   []string
	}{
		"no source":      {func(pv *corev1.PersistentVolume) { pv.Spec.NFS = nil }, []string{"spec:FieldValueRequired"}},
		"two sources":    {func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: "/x"} }, []string{"spec.nfs:FieldValueForbidden"}},
		"no capacity":    {func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil }, []string{"spec.capacity:FieldValueRequired", "spec.capacity:FieldValueNotSupported"}},
		"zero capacity":  {func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = list("storage", "0") }, []string{"spec.capacity[storage]:FieldValueInvalid"}},
		"no access mode": {func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }, []string{"spec.accessModes:FieldValueRequired"}},
		"RWOP and more": {func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = append(pv.Spec.AccessModes, corev1.ReadWriteOncePod)
		}, []string{"spec.accessModes:FieldValueForbidden"}},
		"reclaim policy": {func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" }, []string{"spec.persistentVolumeReclaimPolicy:FieldValueNotSupported"}},
		"relative nfs":   {func(pv *corev1.PersistentVolume) { pv.Spec.NFS.Path = "export" }, []string{"spec.nfs.path:FieldValueInvalid"}},
		"local without affinity": {func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt"}
		}, []string{"spec.nodeAffinity:FieldValueRequired"}},
		"local": {func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS, pv.Spec.Local, pv.Spec.NodeAffinity = nil, &corev1.LocalVolumeSource{Path: "/mnt"}, affinity
		}, nil},
		"csi": {func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS, pv.Spec.CSI = nil, &corev1.CSIPersistentVolumeSource{Driver: "Bad_Driver"}
		}, []string{"spec.csi.driver:FieldValueInvalid", "spec.csi.volumeHandle:FieldValueRequired"}},
		"hostPath backsteps": {func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS, pv.Spec.HostPath = nil, &corev1.HostPathVolumeSource{Path: "/a/../b"}
		}, []string{"spec.hostPath.path:FieldValueInvalid"}},
		"empty affinity": {func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{} }, []string{"spec.nodeAffinity.required:FieldValueRequired"}},
		"class":          {func(pv *corev1.PersistentVolume) { pv.Spec.StorageClassName = "Bad_Class" }, []string{"spec.storageClassName:FieldValueInvalid"}},
		"attributes class without csi": {func(pv *corev1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = new("gold") },
			[]string{"spec.csi:FieldValueRequired"}},
		"mount options annotation": {func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS, pv.Spec.HostPath = nil, &corev1.HostPathVolumeSource{Path: "/x"}
			pv.Annotations = map[string]string{mountOptionsAnnotation: "ro"}
		}, []string{"metadata.annotations.volume.beta.kubernetes.io/mount-options:FieldValueForbidden"}},
	} {
		t.Run(name, func(t *testing.T) {
			pv := newPV()
			c.mutate(pv)
			expectErrors(t, create(r, pv), c.want...)
		})
	}
}

func TestPersistentVolumeUpdate(t *testing.T) {
	r := lookup(t, "persistentvolumes")
	old := newPV()
	expectValid(t, create(r, old))
	upd := old.DeepCopy()
	upd.Spec.NFS.Path = "/other"
	upd.Spec.VolumeMode = new(corev1.PersistentVolumeBlock)
	errs := update(r, upd, old)
	expectErrors(t, errs, "spec.persistentvolumesource:FieldValueForbidden", "volumeMode:FieldValueInvalid")
	if len(errs) > 0 && !strings.HasPrefix(errs[0].Detail, "spec.persistentvolumesource is immutable after creation\n@@") ||
		!strings.Contains(errs[0].Detail, `-  "Path": "/export",`) {
		t.Errorf("message %q, want the diff of the internal form", errs[0].Detail)
	}

	// Node affinity: set once, then only from a beta label to its GA one.
	upd = old.DeepCopy()
	req := corev1.NodeSelectorRequirement{Key: corev1.LabelFailureDomainBetaZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z"}}
	upd.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}}}}
	expectValid(t, update(r, upd, old))
	ga := upd.DeepCopy()
	ga.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key = corev1.LabelTopologyZone
	expectValid(t, update(r, ga, upd))
	other := upd.DeepCopy()
	other.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"y"}
	expectErrors(t, update(r, other, upd), "nodeAffinity:FieldValueInvalid")
	ws := r.Strategy.(registry.WarningsStrategy).WarningsOnUpdate(upd, old)
	if len(ws) != 1 || !strings.Contains(ws[0], "failure-domain.beta.kubernetes.io/zone is deprecated since v1.17") {
		t.Errorf("warnings %q", ws)
	}

	// Status: the transition time moves with the phase.
	st := old.DeepCopy()
	st.Spec.NFS.Path = "/ignored"
	st.Status.Phase = corev1.VolumeAvailable
	st.Status.LastPhaseTransitionTime = old.Status.LastPhaseTransitionTime
	expectValid(t, updateStatus(r, st, old))
	if st.Spec.NFS.Path != "/export" || st.Status.LastPhaseTransitionTime == old.Status.LastPhaseTransitionTime {
		t.Errorf("status update: spec %+v, transition %v", st.Spec.NFS, st.Status.LastPhaseTransitionTime)
	}
	same := st.DeepCopy()
	same.Status.LastPhaseTransitionTime = nil
	expectValid(t, updateStatus(r, same, st))
	if same.Status.LastPhaseTransitionTime != st.Status.LastPhaseTransitionTime {
		t.Error("a status update that keeps the phase lost the transition time")
	}
}
