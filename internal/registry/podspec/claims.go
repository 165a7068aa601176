package podspec

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Access and volume modes a claim may name.
var (
	claimAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	claimVolumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

// ValidateClaimSpec checks a PersistentVolumeClaim spec as kube-apiserver
// checks a new claim's, and an ephemeral volume's claim template's: access
// modes, selector, a positive storage request, storage class, volume
// mode, data sources and volume attributes class. p is the spec's path.
func ValidateClaimSpec(s *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	errs = append(errs, ValidateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	sp := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(sp, q.String(), "must be greater than zero"))
	}
	if s.StorageClassName != nil {
		errs = append(errs, strategy.ValidateName(p.Child("storageClassName"), *s.StorageClassName, validation.IsDNS1123Subdomain)...)
	}
	if s.VolumeMode != nil && !claimVolumeModes.Has(*s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, sets.List(claimVolumeModes)))
	}
	errs = append(errs, validateDataSources(s, p)...)
	if s.VolumeAttributesClassName != nil {
		errs = append(errs, strategy.ValidateName(p.Child("volumeAttributesClassName"), *s.VolumeAttributesClassName, validation.IsDNS1123Subdomain)...)
	}
	return errs
}

// ValidateAccessModes requires known access modes (of a claim or a
// volume), and ReadWriteOncePod alone.
func ValidateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		if !claimAccessModes.Has(m) {
			errs = append(errs, field.NotSupported(p, m, sets.List(claimAccessModes)))
		}
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else if claimAccessModes.Has(m) {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateDataSources checks dataSource and dataSourceRef, then that they
// agree: a dataSourceRef in another namespace admits no dataSource, and
// otherwise both, when set, must name the same object.
func validateDataSources(s *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ds := s.DataSource; ds != nil {
		errs = append(errs, validateDataSourceRef(ds.Name, ds.Kind, ds.APIGroup, nil, p.Child("dataSource"))...)
	}
	if r := s.DataSourceRef; r != nil {
		errs = append(errs, validateDataSourceRef(r.Name, r.Kind, r.APIGroup, r.Namespace, p.Child("dataSourceRef"))...)
	}
	switch ds, r := s.DataSource, s.DataSourceRef; {
	case r != nil && r.Namespace != nil && *r.Namespace != "":
		if ds != nil {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	case ds != nil && r != nil:
		if !reflect.DeepEqual(ds.APIGroup, r.APIGroup) || ds.Kind != r.Kind || ds.Name != r.Name {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	return errs
}

// validateDataSourceRef checks a dataSource or dataSourceRef: a name and
// kind, a PersistentVolumeClaim when no API group is named, a valid group
// and namespace.
func validateDataSourceRef(name, kind string, group, namespace *string, p *field.Path) field.ErrorList {
	errs := RequireAll(p, "name", name != "", "kind", kind != "")
	g := ""
	if group != nil {
		g = *group
	}
	if g == "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	errs = append(errs, strategy.ValidateName(p.Child("apiGroup"), g, validation.IsDNS1123Subdomain)...)
	if namespace != nil {
		errs = append(errs, strategy.ValidateName(p.Child("namespace"), *namespace, validation.IsDNS1123Label)...)
	}
	return errs
}
