package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/webhookconfig"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules, selectors and client configurations webhooks and policies
// share, with kube-apiserver's messages.

var (
	failurePolicies     = []string{"Fail", "Ignore"}
	matchPolicies       = []string{"Equivalent", "Exact"}
	noSideEffects       = []string{"None", "NoneOnDryRun"}
	allSideEffects      = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	operations          = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	mutatingOperations  = []string{"*", "CONNECT", "CREATE", "UPDATE"}
	reinvocation        = []string{"IfNeeded", "Never"}
	scopes              = []string{"*", "Cluster", "Namespaced"}
	reviewVersions      = []string{"v1", "v1beta1"}
	validationActions   = []string{"Audit", "Deny", "Warn"}
	validationReasons   = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	patchTypes          = []string{"ApplyConfiguration", "JSONPatch"}
	parameterNotFoundAc = []string{"Deny", "Allow"}
)

// notSupported is a NotSupported error unless v is one of allowed.
func notSupported[T ~string](p *field.Path, v T, allowed []string) field.ErrorList {
	if slices.Contains(allowed, string(v)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

func validateRuleWithOperations(p *field.Path, r *admissionv1.RuleWithOperations) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionv1.OperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		errs = append(errs, notSupported(p.Child("operations").Index(i), op, operations)...)
	}
	return append(errs, validateRule(p, &r.Rule)...)
}

func validateRule(p *field.Path, r *admissionv1.Rule) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateResources(p.Child("resources"), r.Resources)...)
	if r.Scope != nil {
		errs = append(errs, notSupported(p.Child("scope"), *r.Scope, scopes)...)
	}
	return errs
}

// validateResources checks resource/subresource names and the wildcard
// combinations kube-apiserver refuses.
func validateResources(p *field.Path, resources []string) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	withWildcardSub, withWildcardRes := sets.New[string](), sets.New[string]()
	double, single, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		double = double || rs == "*/*"
		single = single || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*"
			continue
		}
		if withWildcardSub.Has(res) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if withWildcardRes.Has(sub) {
			errs = append(errs, field.Invalid(p.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			withWildcardSub.Insert(res)
		}
		if res == "*" {
			withWildcardRes.Insert(sub)
		}
	}
	if len(resources) > 1 && double {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if single && plain {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// validateClientConfig checks a webhook's client configuration: exactly
// one of url (https, a host, no user, query or fragment) and service (name,
// namespace, a port, a path of DNS-subdomain segments).
func validateClientConfig(p *field.Path, cc *admissionv1.WebhookClientConfig) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(p, "exactly one of url or service is required")}
	case cc.URL != nil:
		return webhookconfig.ValidateURL(p.Child("url"), *cc.URL)
	}
	s := cc.Service
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	return webhookconfig.ValidateService(p.Child("service"), s.Namespace, s.Name, s.Path, port)
}

// validateReviewVersions: one at least, DNS labels, no repeats, and (when
// required) one kube-apiserver speaks.
func validateReviewVersions(p *field.Path, versions []string, requireKnown bool) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "must specify one of v1, v1beta1")}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	known := false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		known = known || slices.Contains(reviewVersions, v)
	}
	if requireKnown && !known {
		errs = append(errs, field.Invalid(p, versions, "must include at least one of v1, v1beta1"))
	}
	return errs
}

// labelSelector checks an optional selector.
func labelSelector(p *field.Path, s *metav1.LabelSelector, allowInvalidValue bool) field.ErrorList {
	if s == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidValue}, p)
}
