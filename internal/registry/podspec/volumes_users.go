package podspec

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// DropDisabledFields clears the fields of a written pod spec that
// kube-apiserver v1.37.2 drops because their feature gate is off by
// default: the owners of the files of secret, config map, downward API
// and projected volumes (defaultUser and user; AtomicWriteVolumeUserFields
// is alpha), and the mode of emptyDir volumes (EmptyDirVolumeMode is
// alpha). An update keeps either kind when old (nil on create) already
// has it. It belongs in PrepareForCreate and PrepareForUpdate: the drop
// comes after the managed fields are tracked, as kube-apiserver's does.
func DropDisabledFields(s, old *corev1.PodSpec) {
	if old == nil || !emptyDirModeInUse(old) {
		for i := range s.Volumes {
			if e := s.Volumes[i].EmptyDir; e != nil {
				e.Mode = nil
			}
		}
	}
	if old != nil && volumeUserFieldsInUse(old) {
		return
	}
	dropVolumeUserFields(s)
}

// emptyDirModeInUse reports whether an emptyDir volume of s has a mode.
func emptyDirModeInUse(s *corev1.PodSpec) bool {
	for i := range s.Volumes {
		if e := s.Volumes[i].EmptyDir; e != nil && e.Mode != nil {
			return true
		}
	}
	return false
}

// volumeUserFieldsInUse reports whether s has any volume user field.
func volumeUserFieldsInUse(s *corev1.PodSpec) bool {
	c := s.DeepCopy()
	dropVolumeUserFields(c)
	return !equality.Semantic.DeepEqual(c.Volumes, s.Volumes)
}

// dropVolumeUserFields clears every volume user field of s.
func dropVolumeUserFields(s *corev1.PodSpec) {
	for i := range s.Volumes {
		vs := &s.Volumes[i].VolumeSource
		if v := vs.Secret; v != nil {
			v.DefaultUser = nil
			dropKeyUsers(v.Items)
		}
		if v := vs.ConfigMap; v != nil {
			v.DefaultUser = nil
			dropKeyUsers(v.Items)
		}
		if v := vs.DownwardAPI; v != nil {
			v.DefaultUser = nil
			dropFileUsers(v.Items)
		}
		if v := vs.Projected; v != nil {
			v.DefaultUser = nil
			for j := range v.Sources {
				dropProjectionUsers(&v.Sources[j])
			}
		}
	}
}

func dropProjectionUsers(s *corev1.VolumeProjection) {
	if s.Secret != nil {
		dropKeyUsers(s.Secret.Items)
	}
	if s.ConfigMap != nil {
		dropKeyUsers(s.ConfigMap.Items)
	}
	if s.DownwardAPI != nil {
		dropFileUsers(s.DownwardAPI.Items)
	}
	if s.ServiceAccountToken != nil {
		s.ServiceAccountToken.User = nil
	}
	if s.ClusterTrustBundle != nil {
		s.ClusterTrustBundle.User = nil
	}
	if s.PodCertificate != nil {
		s.PodCertificate.User = nil
	}
}

func dropKeyUsers(items []corev1.KeyToPath) {
	for i := range items {
		items[i].User = nil
	}
}

func dropFileUsers(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		items[i].User = nil
	}
}

// DropDisabledTemplateFields is DropDisabledFields for a workload's pod
// template (t may be nil, as a ReplicationController's; old is nil on
// create), as kube-apiserver drops them from every template kind.
func DropDisabledTemplateFields(t, old *corev1.PodTemplateSpec) {
	if t == nil {
		return
	}
	var oldSpec *corev1.PodSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	DropDisabledFields(&t.Spec, oldSpec)
}
