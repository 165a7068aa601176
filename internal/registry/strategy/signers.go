package strategy

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSignerName checks a certificate signer name: "<domain>/<path>",
// the domain made of DNS labels (two at least), the path of DNS
// subdomains separated by dots, with kube-apiserver's length limits and
// messages. CSRs, PodCertificateRequests, ClusterTrustBundles and the
// projected volume sources of pods name signers.
func ValidateSignerName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(p, "", validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	errs = append(errs, firstLabelErrors(p, domain, labels, validation.IsDNS1123Label)...)
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(p, domain, "should be a domain with at least two segments separated by dots"))
	}
	errs = append(errs, firstLabelErrors(p, path, strings.Split(path, "."), validation.IsDNS1123Subdomain)...)
	maxLen := validation.DNS1123SubdomainMaxLength + (validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1) + 1
	if len(name) > maxLen {
		errs = append(errs, field.TooLong(p, "", maxLen))
	}
	return errs
}

// firstLabelErrors reports the errors of the first invalid label only (the
// others would repeat them).
func firstLabelErrors(p *field.Path, segment string, labels []string, check func(string) []string) field.ErrorList {
	for _, l := range labels {
		if msgs := check(l); len(msgs) > 0 {
			errs := make(field.ErrorList, len(msgs))
			for i, m := range msgs {
				errs[i] = field.Invalid(p, segment, fmt.Sprintf("validating label %q: %s", l, m))
			}
			return errs
		}
	}
	return nil
}

// IsKubernetesSigner reports whether a signer name is reserved by the
// Kubernetes project (kubernetes.io or a subdomain).
func IsKubernetesSigner(name string) bool {
	domain, _, _ := strings.Cut(name, "/")
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// ClusterTrustBundleName checks a ClusterTrustBundle's name: with a signer
// name, it must start with the signer name with ':' for '/', then ':';
// without, it may hold no ':'. The rest is a DNS subdomain.
func ClusterTrustBundleName(signerName string) apivalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, want)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// ValidateUserAnnotations checks the user annotations of a pod
// certificate (in a PodCertificateRequest or a pod's projected volume):
// domain-prefixed keys (any case) and the annotations' total size limit.
func ValidateUserAnnotations(p *field.Path, annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range SortedKeys(annotations) {
		errs = append(errs, validation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if apivalidation.ValidateAnnotationsSize(annotations) != nil {
		errs = append(errs, field.TooLong(p, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}
