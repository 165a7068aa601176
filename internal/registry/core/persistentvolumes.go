package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// persistentVolumesResource serves persistentvolumes with status. A new
// volume gets the kubernetes.io/pv-protection finalizer
// (StorageObjectInUseProtection admission); binding volumes to claims and
// removing the finalizer are the controller manager's.
func persistentVolumesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "persistentvolumes", Kind: "PersistentVolume", ListKind: "PersistentVolumeList",
		Singular: "persistentvolume", ShortNames: []string{"pv"},
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		ReturnDeletedObject: true,
		New:                 func() runtime.Object { return &corev1.PersistentVolume{} },
		NewList:             func() runtime.Object { return &corev1.PersistentVolumeList{} },
		Strategy: strategy.Typed[*corev1.PersistentVolume]{
			PrepareCreate: func(pv *corev1.PersistentVolume) {
				now := metav1.Now()
				pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
			},
			PrepareUpdate:  func(pv, old *corev1.PersistentVolume) { pv.Status = old.Status },
			Defaults:       defaultPersistentVolume,
			ValidateNew:    validatePersistentVolume,
			ValidateChange: validatePersistentVolumeUpdate,
			Warn:           pvWarnings,
		},
		// As kube-apiserver, the status endpoint keeps the spec, writes
		// status and metadata, and stamps a phase change.
		Status: strategy.TypedStatus[*corev1.PersistentVolume]{
			PrepareUpdate: preparePVStatusUpdate,
			ValidateChange: func(pv, old *corev1.PersistentVolume) field.ErrorList {
				return strategy.ValidateMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta)
			},
		},
		Attrs: strategy.Attrs[*corev1.PersistentVolume](false, nil),
		Table: printers.For("", "PersistentVolume"),
	}
}

// preparePVStatusUpdate keeps old's spec, and sets
// status.lastPhaseTransitionTime when the phase changes and the client did
// not set a new one (keeping old's when the phase stays).
func preparePVStatusUpdate(pv, old *corev1.PersistentVolume) {
	pv.Spec = old.Spec
	st, ost := &pv.Status, &old.Status
	switch {
	case ost.Phase == st.Phase && st.LastPhaseTransitionTime == nil:
		st.LastPhaseTransitionTime = ost.LastPhaseTransitionTime
	case ost.Phase != st.Phase && (st.LastPhaseTransitionTime == nil || st.LastPhaseTransitionTime.Equal(ost.LastPhaseTransitionTime)):
		now := metav1.Now()
		st.LastPhaseTransitionTime = &now
	}
}

// defaultPersistentVolume defaults as core/v1: phase Pending, reclaim
// policy Retain, volume mode Filesystem, capacity rounded to milli-units,
// and the defaults of the volume sources that have some.
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	s := &pv.Spec
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if s.PersistentVolumeReclaimPolicy == "" {
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if s.VolumeMode == nil {
		s.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	podspec.RoundResources(s.Capacity)
	defaultPVSources(&s.PersistentVolumeSource)
}

func defaultPVSources(src *corev1.PersistentVolumeSource) {
	if h := src.HostPath; h != nil && h.Type == nil {
		h.Type = new(corev1.HostPathUnset)
	}
	if r := src.RBD; r != nil {
		setIfEmpty(&r.RBDPool, "rbd")
		setIfEmpty(&r.RadosUser, "admin")
		setIfEmpty(&r.Keyring, "/etc/ceph/keyring")
	}
	if i := src.ISCSI; i != nil {
		setIfEmpty(&i.ISCSIInterface, "default")
	}
	if a := src.AzureDisk; a != nil {
		podspec.DefaultAzureDisk(a)
	}
	if s := src.ScaleIO; s != nil {
		setIfEmpty(&s.StorageMode, "ThinProvisioned")
		setIfEmpty(&s.FSType, "xfs")
	}
}

func setIfEmpty(s *string, v string) {
	if *s == "" {
		*s = v
	}
}
