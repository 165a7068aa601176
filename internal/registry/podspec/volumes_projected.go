package podspec

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Bounds of a projected token's and a pod certificate's lifetime, as
// kube-apiserver v1.37.2's.
const (
	minTokenExpiration   = 10 * 60        // 10 minutes
	maxTokenExpiration   = 1 << 32        // seconds
	minCertExpiration    = 3600           // 1 h
	maxCertExpiration    = 91 * 24 * 3600 // 91 days: 7862400
	maxK8sCertExpiration = 24 * 3600      // for kubernetes.io signers
)

// PodCertificateKeyTypes are the key types a podCertificate source may ask for.
var PodCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validateProjected checks a projected volume as kube-apiserver does: the
// default mode, then each source. The files of all sources share one
// directory, so a path written by two of them is refused, on the volume's
// path (p). The ClusterTrustBundleProjection and PodCertificateRequest
// gates are on by default in v1.37.2 (GA), so those sources are checked;
// AtomicWriteVolumeUserFields is off (alpha), so the user fields never
// get here (dropVolumeUserFields) and are not checked.
func validateProjected(pv *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(pv.DefaultMode, p.Child("defaultMode"))
	paths := sets.New[string]()
	for i := range pv.Sources {
		errs = append(errs, validateProjection(&pv.Sources[i], paths, p, p.Child("sources").Index(i))...)
	}
	return errs
}

// validateProjection checks one source (sp is its path) in kube's order;
// a source with more than one kind is checked for each and refused.
func validateProjection(s *corev1.VolumeProjection, paths sets.Set[string], p, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if s.Secret != nil {
		n++
		errs = append(errs, validateProjectedKeys(s.Secret.Name, s.Secret.Items, paths, p, sp.Child("secret"))...)
	}
	if s.ConfigMap != nil {
		n++
		errs = append(errs, validateProjectedKeys(s.ConfigMap.Name, s.ConfigMap.Items, paths, p, sp.Child("configMap"))...)
	}
	if s.DownwardAPI != nil {
		n++
		errs = append(errs, validateProjectedDownwardAPI(s.DownwardAPI.Items, paths, p, sp.Child("downwardAPI"))...)
	}
	if s.ServiceAccountToken != nil {
		n++
		errs = append(errs, validateProjectedToken(s.ServiceAccountToken, p, sp.Child("serviceAccountToken"))...)
	}
	if s.ClusterTrustBundle != nil {
		n++
		errs = append(errs, validateProjectedTrustBundle(s.ClusterTrustBundle, paths, p, sp.Child("clusterTrustBundle"))...)
	}
	if s.PodCertificate != nil {
		n++
		errs = append(errs, validatePodCertificate(s.PodCertificate, paths, p, sp.Child("podCertificate"))...)
	}
	if n > 1 {
		errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
	}
	return errs
}

// claimPath records a file path of the volume; a path already written by
// an earlier source or item is refused on the volume's path p, the value
// being what kube-apiserver names (a secret's or config map's name, else
// the path).
func claimPath(paths sets.Set[string], path string, value any, p *field.Path) field.ErrorList {
	if paths.Has(path) {
		return field.ErrorList{field.Invalid(p, value, "conflicting duplicate paths")}
	}
	paths.Insert(path)
	return nil
}

// validateProjectedKeys checks a secret or config map source (kp is its
// path): a name, and items with a key and a local path each.
func validateProjectedKeys(name string, items []corev1.KeyToPath, paths sets.Set[string], p, kp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(kp.Child("name"), ""))
	}
	for i := range items {
		it, ip := &items[i], kp.Child("items").Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		}
		if it.Path == "" {
			errs = append(errs, field.Required(ip.Child("path"), ""))
		}
		errs = append(errs, validateLocalPath(it.Path, ip.Child("path"))...)
		errs = append(errs, validateFileMode(it.Mode, ip.Child("mode"))...)
		if it.Path != "" {
			errs = append(errs, claimPath(paths, it.Path, name, p)...)
		}
	}
	return errs
}

// validateProjectedDownwardAPI checks a downwardAPI source's files. As
// kube-apiserver, the errors of every file are reported on the source's
// path dp, without the item's index.
func validateProjectedDownwardAPI(files []corev1.DownwardAPIVolumeFile, paths sets.Set[string], p, dp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range files {
		errs = append(errs, validateDownwardAPIFile(&files[i], dp)...)
		if files[i].Path != "" {
			errs = append(errs, claimPath(paths, files[i].Path, files[i].Path, p)...)
		}
	}
	return errs
}

// validateProjectedToken checks a serviceAccountToken source (tp is its
// path): an expiration of 10 minutes to 2^32 seconds, and a local path,
// which kube-apiserver reports on the volume's path p ("projected.path").
// The token's path is not one the duplicate check counts.
func validateProjectedToken(t *corev1.ServiceAccountTokenProjection, p, tp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch exp := t.ExpirationSeconds; {
	case exp == nil:
		errs = append(errs, field.Required(tp.Child("expirationSeconds"), ""))
	case *exp < minTokenExpiration:
		errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
	case *exp > maxTokenExpiration:
		errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
	}
	if t.Path == "" {
		return append(errs, field.Required(p.Child("path"), ""))
	}
	return append(errs, validateLocalPath(t.Path, p.Child("path"))...)
}

// ctbProjection renders a clusterTrustBundle source in an error as
// kube-apiserver does, which prints its internal type (JSON without
// tags: the Go field names).
type ctbProjection struct {
	Name          *string
	SignerName    *string
	LabelSelector *metav1.LabelSelector
	Optional      *bool
	Path          string
	User          *int64
}

// validateProjectedTrustBundle checks a clusterTrustBundle source (bp is
// its path): a bundle by name, or by signer name and label selector, and
// a local path.
func validateProjectedTrustBundle(b *corev1.ClusterTrustBundleProjection, paths sets.Set[string], p, bp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Name != nil && b.SignerName != nil:
		errs = append(errs, field.Invalid(bp, &ctbProjection{b.Name, b.SignerName, b.LabelSelector, b.Optional, b.Path, b.User},
			"only one of name and signerName may be used"))
	case b.Name != nil:
		errs = append(errs, validateTrustBundleName(*b.Name, b.LabelSelector, bp)...)
	case b.SignerName != nil:
		if *b.SignerName == "" {
			errs = append(errs, field.Required(bp.Child("signerName"), "must be a valid signer name"))
		}
		errs = append(errs, strategy.ValidateSignerName(bp.Child("signerName"), *b.SignerName)...)
		errs = append(errs, metav1validation.ValidateLabelSelector(b.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, bp.Child("labelSelector"))...)
	default:
		errs = append(errs, field.Required(bp, "either name or signerName must be specified"))
	}
	if b.Path == "" {
		errs = append(errs, field.Required(bp.Child("path"), ""))
	}
	errs = append(errs, validateLocalPath(b.Path, bp.Child("path"))...)
	return append(errs, claimPath(paths, b.Path, b.Path, p)...)
}

// validateTrustBundleName checks a bundle named directly: a name a
// ClusterTrustBundle may have (the signer name is read from a name with a
// ':'), and no label selector.
func validateTrustBundleName(name string, sel *metav1.LabelSelector, bp *field.Path) field.ErrorList {
	var errs field.ErrorList
	np := bp.Child("name")
	if name == "" {
		errs = append(errs, field.Required(np, "must be a valid object name"))
	}
	signer := ""
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		signer = strings.ReplaceAll(name[:i], ":", "/")
	}
	for _, msg := range strategy.ClusterTrustBundleName(signer)(name, false) {
		errs = append(errs, field.Invalid(np, name, fmt.Sprintf("not a valid clustertrustbundlename: %v", msg)))
	}
	if sel != nil {
		errs = append(errs, field.Invalid(bp.Child("labelSelector"), sel, "labelSelector must be unset if name is specified"))
	}
	return errs
}

// validatePodCertificate checks a podCertificate source (cp is its path):
// signer, user annotations, key type, the bounds of maxExpirationSeconds
// (at most 24 h for kubernetes.io signers, else 91 days), and at least one
// local path to write to.
func validatePodCertificate(c *corev1.PodCertificateProjection, paths sets.Set[string], p, cp *field.Path) field.ErrorList {
	errs := strategy.ValidateSignerName(cp.Child("signerName"), c.SignerName)
	if c.UserAnnotations != nil {
		errs = append(errs, strategy.ValidateUserAnnotations(cp.Child("userAnnotations"), c.UserAnnotations)...)
	}
	if !slices.Contains(PodCertificateKeyTypes, c.KeyType) {
		errs = append(errs, field.NotSupported(cp.Child("keyType"), c.KeyType, PodCertificateKeyTypes))
	}
	if m := c.MaxExpirationSeconds; m != nil {
		hi := maxCertExpiration
		if strategy.IsKubernetesSigner(c.SignerName) {
			hi = maxK8sCertExpiration
		}
		if *m < minCertExpiration {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", minCertExpiration)))
		}
		if *m > int32(hi) {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *m, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", hi)))
		}
	}
	written := false
	for _, f := range []struct{ name, path string }{
		{"credentialBundlePath", c.CredentialBundlePath}, {"keyPath", c.KeyPath}, {"certificateChainPath", c.CertificateChainPath},
	} {
		if f.path != "" {
			written = true
			errs = append(errs, validateLocalPath(f.path, cp.Child(f.name))...)
			errs = append(errs, claimPath(paths, f.path, f.path, p)...)
		}
	}
	if !written {
		errs = append(errs, field.Required(cp, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}
