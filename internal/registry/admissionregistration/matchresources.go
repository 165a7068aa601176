package admissionregistration

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// staticSuffix ends the names reserved for manifest-based configurations.
const staticSuffix = ".static.k8s.io"

// validateStaticSuffix refuses the names kube-apiserver v1.37 reserves
// (ManifestBasedAdmissionControlConfig is on by default).
func validateStaticSuffix(name string) field.ErrorList {
	if !strings.HasSuffix(name, staticSuffix) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticSuffix))}
}

// defaultMatchResources fills matchPolicy Equivalent, empty selectors and
// the rules' scope "*".
func defaultMatchResources(m *admissionv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = new(admissionv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		defaultRule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRule(&m.ExcludeResourceRules[i].Rule)
	}
}

func validateMatchResources(p *field.Path, m *admissionv1.MatchResources) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else {
		errs = append(errs, notSupported(p.Child("matchPolicy"), *m.MatchPolicy, matchPolicies)...)
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, labelSelector(p.Child("namespaceSelector"), m.NamespaceSelector, false)...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, labelSelector(p.Child("objectSelector"), m.ObjectSelector, false)...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(p.Child("resourceRules").Index(i), &m.ResourceRules[i])...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(p.Child("excludeResourceRules").Index(i), &m.ExcludeResourceRules[i])...)
	}
	return errs
}

func validateNamedRule(p *field.Path, r *admissionv1.NamedRuleWithOperations) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, n := range r.ResourceNames {
		for _, msg := range content.IsPathSegmentName(n) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), n, msg))
		}
		if names.Has(n) {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), n))
		}
		names.Insert(n)
	}
	return append(errs, validateRuleWithOperations(p, &r.RuleWithOperations)...)
}

// validateMutatingOperations: mutating policies and bindings never match
// DELETE (the path has no index, as kube-apiserver reports it).
func validateMutatingOperations(p *field.Path, m *admissionv1.MatchResources) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			errs = append(errs, notSupported(p.Child("resourceRules", "operations"), op, mutatingOperations)...)
		}
	}
	return errs
}

func validateParamKind(p *field.Path, k *admissionv1.ParamKind) field.ErrorList {
	var errs field.ErrorList
	av := p.Child("apiVersion")
	switch {
	case k.APIVersion == "":
		errs = append(errs, field.Required(av, ""))
	case strings.Count(k.APIVersion, "/") > 1:
		errs = append(errs, field.Invalid(av, k.APIVersion, fmt.Sprintf("unexpected GroupVersion string: %v", k.APIVersion)))
	default:
		group, ver, ok := strings.Cut(k.APIVersion, "/")
		if !ok {
			group, ver = "", k.APIVersion
		}
		if k.APIVersion == "/" {
			group, ver = "", ""
		}
		if group != "" {
			if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(av, group, strings.Join(msgs, ",")))
			}
		}
		if ver == "" {
			errs = append(errs, field.Invalid(av, k.APIVersion, "version must be specified"))
		} else if msgs := validation.IsDNS1035Label(ver); len(msgs) > 0 {
			errs = append(errs, field.Invalid(av, ver, strings.Join(msgs, ",")))
		}
	}
	if k.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := validation.IsDNS1035Label(strings.ToLower(k.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), k.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func validateParamRef(p *field.Path, r *admissionv1.ParamRef) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	const exclusive = `name and selector are mutually exclusive`
	if r.Name != "" {
		for _, msg := range content.IsPathSegmentName(r.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
		}
		if r.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), exclusive))
		}
	}
	if r.Selector != nil {
		errs = append(errs, labelSelector(p.Child("selector"), r.Selector, false)...)
		if r.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), exclusive))
		}
	}
	if r.Name == "" && r.Selector == nil {
		errs = append(errs, field.Required(p, `one of name or selector must be specified`))
	}
	if a := r.ParameterNotFoundAction; a == nil || *a == "" {
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	} else if *a != admissionv1.DenyAction && *a != admissionv1.AllowAction {
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), a, parameterNotFoundAc))
	}
	return errs
}

// validatePolicyName checks a binding's policy name.
func validatePolicyName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
