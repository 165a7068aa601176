package apps

import (
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Access and volume modes a claim may name, in the order kube-apiserver
// lists them.
var (
	claimAccessModes = []string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOnce), string(corev1.ReadWriteOncePod)}
	claimVolumeModes = []string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}
)

// validateClaimSpec checks the spec of a statefulset's volume claim
// template as kube-apiserver checks a new claim's: access modes, the
// storage request, selector, storage class and volume mode. Data sources
// are not checked.
func validateClaimSpec(s *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("accessModes")
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(ap, "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	oncePod, others := false, false
	for _, m := range s.AccessModes {
		supported := false
		for _, a := range claimAccessModes {
			supported = supported || string(m) == a
		}
		if !supported {
			errs = append(errs, field.NotSupported(ap, m, claimAccessModes))
		}
		if m == corev1.ReadWriteOncePod {
			oncePod = true
		} else if supported {
			others = true
		}
	}
	if oncePod && others {
		errs = append(errs, field.Forbidden(ap, "may not use ReadWriteOncePod with other access modes"))
	}
	rp := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(rp, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(rp, q.String(), "must be greater than zero"))
	}
	if c := s.StorageClassName; c != nil && *c != "" {
		errs = append(errs, strategy.ValidateName(p.Child("storageClassName"), *c, validation.IsDNS1123Subdomain)...)
	}
	if m := s.VolumeMode; m != nil && *m != corev1.PersistentVolumeBlock && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, claimVolumeModes))
	}
	return errs
}
