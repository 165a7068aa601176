package core

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// persistentVolumeClaimsResource serves persistentvolumeclaims with status.
// A claim created without a class gets the default StorageClass when
// storage.k8s.io is served (kube-apiserver's DefaultStorageClass
// admission) and the kubernetes.io/pvc-protection finalizer
// (StorageObjectInUseProtection); growing the storage request needs a bound
// claim of a class that allows expansion (PersistentVolumeClaimResize).
// Binding claims and removing the finalizer are the controller manager's
// (persistentvolume-binder and pvc-protection controllers).
func persistentVolumeClaimsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim",
		ListKind: "PersistentVolumeClaimList", Singular: "persistentvolumeclaim",
		ShortNames: []string{"pvc"}, Namespaced: true,
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		ReturnDeletedObject: true,
		New:                 func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
		NewList:             func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
		Strategy: strategy.Typed[*corev1.PersistentVolumeClaim]{
			PrepareCreate:  preparePVCCreate,
			PrepareUpdate:  preparePVCUpdate,
			Defaults:       defaultPVC,
			ValidateNew:    validatePVC,
			ValidateChange: validatePVCUpdate,
			Warn:           pvcWarnings,
		},
		// As kube-apiserver, the status endpoint keeps the spec and
		// writes status and metadata.
		Status: strategy.TypedStatus[*corev1.PersistentVolumeClaim]{
			PrepareUpdate:  func(c, old *corev1.PersistentVolumeClaim) { c.Spec = old.Spec },
			ValidateChange: validatePVCStatusUpdate,
		},
		Admit: admitPVC,
		Quota: pvcQuota{},
		Attrs: strategy.Attrs[*corev1.PersistentVolumeClaim](true, nil),
		Table: printers.For("", "PersistentVolumeClaim"),
	}
}

// defaultPVC defaults as core/v1: phase Pending, volume mode Filesystem,
// quantities rounded up to milli-units.
func defaultPVC(c *corev1.PersistentVolumeClaim) {
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	if c.Spec.VolumeMode == nil {
		c.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	podspec.RoundResources(c.Spec.Resources.Limits)
	podspec.RoundResources(c.Spec.Resources.Requests)
	podspec.RoundResources(c.Status.Capacity)
	podspec.RoundResources(c.Status.AllocatedResources)
}

// preparePVCCreate resets the status to Pending and fills dataSource and
// dataSourceRef from each other (dropping a dataSource of a kind older
// servers ignored, and a cross-namespace dataSourceRef, whose feature is
// off in kube-apiserver v1.37).
func preparePVCCreate(c *corev1.PersistentVolumeClaim) {
	c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	dropCrossNamespaceDataSourceRef(&c.Spec, nil)
	enforceDataSourceCompatibility(&c.Spec, nil)
	normalizeDataSources(&c.Spec)
}

func preparePVCUpdate(c, old *corev1.PersistentVolumeClaim) {
	c.Status = old.Status
	dropCrossNamespaceDataSourceRef(&c.Spec, &old.Spec)
	enforceDataSourceCompatibility(&c.Spec, &old.Spec)
	normalizeDataSources(&c.Spec)
}

func dropCrossNamespaceDataSourceRef(s, old *corev1.PersistentVolumeClaimSpec) {
	if r := s.DataSourceRef; r != nil && r.Namespace != nil && *r.Namespace != "" && (old == nil || old.DataSourceRef == nil) {
		s.DataSourceRef = nil
	}
}

func enforceDataSourceCompatibility(s, old *corev1.PersistentVolumeClaimSpec) {
	if (old != nil && (old.DataSource != nil || old.DataSourceRef != nil)) || s.DataSourceRef != nil {
		return
	}
	if ds := s.DataSource; ds != nil {
		group := ""
		if ds.APIGroup != nil {
			group = *ds.APIGroup
		}
		if (ds.Kind == "PersistentVolumeClaim" && group == "") || (ds.Kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io") {
			return
		}
	}
	s.DataSource = nil
}

func normalizeDataSources(s *corev1.PersistentVolumeClaimSpec) {
	switch ds, ref := s.DataSource, s.DataSourceRef; {
	case ds != nil && ref == nil:
		s.DataSourceRef = &corev1.TypedObjectReference{Kind: ds.Kind, Name: ds.Name, APIGroup: cloneString(ds.APIGroup)}
	case ref != nil && ds == nil && (ref.Namespace == nil || *ref.Namespace == ""):
		s.DataSource = &corev1.TypedLocalObjectReference{Kind: ref.Kind, Name: ref.Name, APIGroup: cloneString(ref.APIGroup)}
	}
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	return new(*s)
}

var (
	storageClassesGVR = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	pvcsGR            = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims").GroupResource()
)

const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
