package certificates

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

const group = "certificates.k8s.io"

// validateSignerName checks a signer name: "<domain>/<path>", the domain
// made of DNS labels (two at least), the path of DNS subdomains separated
// by dots, with kube-apiserver's length limits and messages.
func validateSignerName(p *field.Path, name string) field.ErrorList {
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

// isKubernetesSigner reports whether a signer name is reserved by the
// Kubernetes project (kubernetes.io or a subdomain).
func isKubernetesSigner(name string) bool {
	domain, _, _ := strings.Cut(name, "/")
	return domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io")
}

// allowedForSigner asks the server's authorizer whether user may verb
// ("approve", "sign", "attest") for signerName, or for every signer of its
// domain ("example.com/*"), as kube-apiserver's certificate admission does.
func allowedForSigner(ctx context.Context, env registry.Env, user registry.UserInfo, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := env.Authorizer().Authorize(ctx, authorizer.Attributes{
			User: user.AuthorizerUser(), Verb: verb, ResourceRequest: true,
			APIGroup: group, APIVersion: "*", Resource: "signers", Name: name,
		})
		if err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}

// forbidden is the 403 of kube-apiserver's admission on resource.
func forbidden(resource, name string, format string, args ...any) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: resource}, name, fmt.Errorf(format, args...))
}
