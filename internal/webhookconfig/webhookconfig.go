// Package webhookconfig validates the client config every webhook shares
// (admission webhook configurations, CRD conversion webhooks): a URL or a
// Service reference, with kube-apiserver's field errors. It has no
// dependencies of its own, so pure packages (crdschema) and the registry
// both use it.
package webhookconfig

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateURL checks a webhook's client config URL with Kubernetes'
// messages.
func ValidateURL(p *field.Path, raw string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// ValidateService checks a webhook's client config Service reference
// (port already defaulted) with Kubernetes' messages.
func ValidateService(p *field.Path, namespace, name string, path *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if path == nil || *path == "/" || *path == "" {
		return errs
	}
	pp := p.Child("path")
	if *path == "//" {
		return append(errs, field.Invalid(pp, *path, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(*path, "/") {
		errs = append(errs, field.Invalid(pp, *path, "must start with a '/'"))
	}
	rest := strings.TrimSuffix((*path)[1:], "/")
	for i, seg := range strings.Split(rest, "/") {
		if seg == "" {
			errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(seg) {
			errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}
