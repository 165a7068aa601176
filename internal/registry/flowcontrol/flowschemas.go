package flowcontrol

import (
	"fmt"
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// defaultMatchingPrecedence is the precedence of a FlowSchema naming none.
const defaultMatchingPrecedence = 1000

func flowSchemasResource() *registry.Resource {
	return &registry.Resource{
		Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas", Kind: "FlowSchema",
		ListKind: "FlowSchemaList", Singular: "flowschema",
		New:     func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
		NewList: func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
		Strategy: strategy.Typed[*flowcontrolv1.FlowSchema]{
			PrepareCreate: func(fs *flowcontrolv1.FlowSchema) { fs.Status = flowcontrolv1.FlowSchemaStatus{} },
			PrepareUpdate: func(fs, old *flowcontrolv1.FlowSchema) { fs.Status = old.Status },
			Defaults: func(fs *flowcontrolv1.FlowSchema) {
				if fs.Spec.MatchingPrecedence == 0 {
					fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
				}
			},
			ValidateNew: validateFlowSchema,
			ValidateChange: func(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateFlowSchemaBody(fs)...)
			},
		},
		Status: strategy.TypedStatus[*flowcontrolv1.FlowSchema]{
			PrepareUpdate: func(fs, old *flowcontrolv1.FlowSchema) {
				fs.Spec = old.Spec
				strategy.ResetMetaForStatus(&fs.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateFlowSchemaStatus(&fs.Status)...)
			},
		},
		Bootstrap: bootstrapFlowSchemas,
		Attrs:     strategy.Attrs[*flowcontrolv1.FlowSchema](true, nil),
		Table:     printers.For("flowcontrol.apiserver.k8s.io", "FlowSchema"),
	}
}

var (
	distinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedVerbs       = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	subjectKinds         = []string{"Group", "ServiceAccount", "User"}
)

func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	errs := strategy.ValidateMeta(&fs.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateFlowSchemaBody(fs)...)
}

func validateFlowSchemaBody(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	p := strategy.SpecPath
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec, p)
	if mand, ok := mandatoryFlowSchema(fs.Name); ok && !apiequality.Semantic.DeepEqual(fs.Spec, mand) {
		errs = append(errs, field.Invalid(p, strategy.GoNamed{V: fs.Spec}, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return append(errs, validateFlowSchemaStatus(&fs.Status)...)
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mp := p.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !slices.Contains(distinguisherMethods, string(dm.Type)) {
		errs = append(errs, field.NotSupported(p.Child("distinguisherMethod", "type"), strategy.GoNamed{V: *dm}, distinguisherMethods))
	}
	pl := p.Child("priorityLevelConfiguration", "name")
	if spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(pl, "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.PriorityLevelConfiguration.Name, false) {
			errs = append(errs, field.Invalid(pl, spec.PriorityLevelConfiguration.Name, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, validateRule(&spec.Rules[i], p.Child("rules").Index(i))...)
	}
	return errs
}

func validateRule(r *flowcontrolv1.PolicyRulesWithSubjects, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Subjects) == 0 {
		errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range r.Subjects {
		errs = append(errs, validateSubject(&r.Subjects[i], p.Child("subjects").Index(i))...)
	}
	if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
		errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range r.ResourceRules {
		errs = append(errs, validateResourceRule(&r.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range r.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&r.NonResourceRules[i], p.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

func validateSubject(s *flowcontrolv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbidUser := field.Forbidden(p.Child("user"), "user is forbidden when subject kind is not 'User'")
	forbidGroup := field.Forbidden(p.Child("group"), "group is forbidden when subject kind is not 'Group'")
	forbidSA := field.Forbidden(p.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'")
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, p.Child("serviceAccount"))...)
		errs = appendIf(errs, s.User != nil, forbidUser)
		errs = appendIf(errs, s.Group != nil, forbidGroup)
	case flowcontrolv1.SubjectKindUser:
		switch {
		case s.User == nil:
			errs = append(errs, field.Required(p.Child("user"), "user is required when subject kind is 'User'"))
		case s.User.Name == "":
			errs = append(errs, field.Required(p.Child("user", "name"), ""))
		}
		errs = appendIf(errs, s.ServiceAccount != nil, forbidSA)
		errs = appendIf(errs, s.Group != nil, forbidGroup)
	case flowcontrolv1.SubjectKindGroup:
		switch {
		case s.Group == nil:
			errs = append(errs, field.Required(p.Child("group"), "group is required when subject kind is 'Group'"))
		case s.Group.Name == "":
			errs = append(errs, field.Required(p.Child("group", "name"), ""))
		}
		errs = appendIf(errs, s.ServiceAccount != nil, forbidSA)
		errs = appendIf(errs, s.User != nil, forbidUser)
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, subjectKinds))
	}
	return errs
}

func appendIf(errs field.ErrorList, cond bool, e *field.Error) field.ErrorList {
	if cond {
		return append(errs, e)
	}
	return errs
}

func validateServiceAccountSubject(s *flowcontrolv1.ServiceAccountSubject, p *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(p, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	switch {
	case s.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case s.Name != flowcontrolv1.NameAll:
		for _, msg := range apivalidation.ValidateServiceAccountName(s.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
		}
	}
	if s.Namespace == "" {
		return append(errs, field.Required(p.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apivalidation.ValidateNamespaceName(s.Namespace, false) {
		errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
	}
	return errs
}

// validateVerbs requires at least one verb, and either "*" alone or only
// known verbs.
func validateVerbs(verbs []string, p *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(p, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(p, verbs, "if '*' is present, must not specify other verbs")}
		}
	case !sets.New(supportedVerbs...).HasAll(verbs...):
		return field.ErrorList{field.NotSupported(p, verbs, supportedVerbs)}
	}
	return nil
}

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

func validateResourceRule(r *flowcontrolv1.ResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(r.Verbs, p.Child("verbs"))
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(r.Resources) > 1 && slices.Contains(r.Resources, "*") {
		errs = append(errs, field.Invalid(p.Child("resources"), r.Resources, "if '*' is present, must not specify other resources"))
	}
	np := p.Child("namespaces")
	switch {
	case len(r.Namespaces) == 0 && !r.ClusterScope:
		errs = append(errs, field.Required(np, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(r.Namespaces, "*"):
		if len(r.Namespaces) > 1 {
			errs = append(errs, field.Invalid(np, r.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range r.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(np.Index(i), ns, nsErrIntro+msg))
			}
		}
	}
	return errs
}

func validateNonResourceRule(r *flowcontrolv1.NonResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(r.Verbs, p.Child("verbs"))
	up := p.Child("nonResourceURLs")
	switch {
	case len(r.NonResourceURLs) == 0:
		errs = append(errs, field.Required(up, "nonResourceURLs must contain at least one value"))
	case slices.Contains(r.NonResourceURLs, "*"):
		if len(r.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(up, r.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range r.NonResourceURLs {
			if msg := nonResourceURLProblem(u); msg != "" {
				errs = append(errs, field.Invalid(up.Index(i), u, msg))
			}
		}
	}
	return errs
}

// nonResourceURLProblem says what is wrong with a non-resource URL path:
// it must start with a slash, hold no white space or double slash, and
// use "*" only as a final "/*".
func nonResourceURLProblem(path string) string {
	switch {
	case path == "":
		return "must not be empty"
	case path == "/":
		return ""
	case path[0] != '/':
		return "must start with slash"
	case slices.Contains([]byte(path), ' '):
		return "must not contain white-space"
	case containsDoubleSlash(path):
		return "must not contain double slash"
	}
	n := 0
	for _, c := range path {
		if c == '*' {
			n++
		}
	}
	if n > 1 || (n == 1 && path[len(path)-2:] != "/*") {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func containsDoubleSlash(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == '/' && s[i-1] == '/' {
			return true
		}
	}
	return false
}

func validateFlowSchemaStatus(st *flowcontrolv1.FlowSchemaStatus) field.ErrorList {
	var errs, late field.ErrorList
	seen := sets.New[flowcontrolv1.FlowSchemaConditionType]()
	p := strategy.StatusPath.Child("conditions")
	for i, c := range st.Conditions {
		if seen.Has(c.Type) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen.Insert(c.Type)
		if c.Type == "" {
			// Reported by kube-apiserver v1.37's declarative rules: last,
			// without detail.
			late = append(late, field.Required(p.Index(i).Child("type"), ""))
		}
	}
	return append(errs, late...)
}
