package flowcontrol

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Request is what classification looks at: who asks and what for, as the
// API server's request information says it.
type Request struct {
	// User is the authenticated (or impersonated) user name; Groups are
	// its groups.
	User   string
	Groups []string
	// IsResource is true for /api and /apis resource requests.
	IsResource bool
	// Verb is the API verb of a resource request (get, list, watch,
	// create, update, patch, delete, deletecollection), or the lower-case
	// HTTP method of a non-resource request (get, post, put, …).
	Verb string
	// APIGroup, Resource, Subresource, Namespace and Name of a resource
	// request ("" group for the core API, "" namespace cluster-wide).
	APIGroup, Resource, Subresource, Namespace, Name string
	// Path is the URL path of a non-resource request.
	Path string
}

// serviceAccountPrefix starts the user name of every ServiceAccount:
// system:serviceaccount:NAMESPACE:NAME.
const serviceAccountPrefix = "system:serviceaccount:"

// matchesFlowSchema reports whether any rule of the schema matches.
func matchesFlowSchema(fs *flowcontrolv1.FlowSchema, r *Request) bool {
	for i := range fs.Spec.Rules {
		if matchesPolicyRule(&fs.Spec.Rules[i], r) {
			return true
		}
	}
	return false
}

// matchesPolicyRule: some subject matches and some resource or
// non-resource rule matches.
func matchesPolicyRule(rule *flowcontrolv1.PolicyRulesWithSubjects, r *Request) bool {
	subject := slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(&s, r) })
	if !subject {
		return false
	}
	if r.IsResource {
		return slices.ContainsFunc(rule.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(&rr, r) })
	}
	return slices.ContainsFunc(rule.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool { return matchesNonResourceRule(&nr, r) })
}

func matchesSubject(s *flowcontrolv1.Subject, r *Request) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == r.User)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(r.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		rest, ok := strings.CutPrefix(r.User, serviceAccountPrefix)
		if !ok {
			return false
		}
		ns, name, ok := strings.Cut(rest, ":")
		if !ok || ns != s.ServiceAccount.Namespace {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == name
	}
	return false
}

// matchesResourceRule checks verb, group, resource (or
// resource/subresource) and namespace: a cluster-wide request matches
// only a rule with clusterScope.
func matchesResourceRule(rr *flowcontrolv1.ResourcePolicyRule, r *Request) bool {
	if !containsOrAll(rr.Verbs, r.Verb, flowcontrolv1.VerbAll) ||
		!containsOrAll(rr.APIGroups, r.APIGroup, flowcontrolv1.APIGroupAll) {
		return false
	}
	res := r.Resource
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	if !containsOrAll(rr.Resources, res, flowcontrolv1.ResourceAll) {
		return false
	}
	if r.Namespace == "" {
		return rr.ClusterScope
	}
	return containsOrAll(rr.Namespaces, r.Namespace, flowcontrolv1.NamespaceEvery)
}

// matchesNonResourceRule checks the verb and the path: "*" matches every
// path, "/prefix/*" every path under the prefix, anything else itself.
func matchesNonResourceRule(nr *flowcontrolv1.NonResourcePolicyRule, r *Request) bool {
	if !containsOrAll(nr.Verbs, r.Verb, flowcontrolv1.VerbAll) {
		return false
	}
	for _, u := range nr.NonResourceURLs {
		switch {
		case u == flowcontrolv1.NonResourceAll || u == r.Path:
			return true
		case strings.HasSuffix(u, "/*") && strings.HasPrefix(r.Path, strings.TrimSuffix(u, "*")):
			return true
		}
	}
	return false
}

func containsOrAll(list []string, v, all string) bool {
	for _, x := range list {
		if x == all || x == v {
			return true
		}
	}
	return false
}

// flowDistinguisher is the part of a flow's identity that the schema's
// distinguisher method picks: the user, the namespace, or nothing.
func flowDistinguisher(fs *flowcontrolv1.FlowSchema, r *Request) string {
	if fs.Spec.DistinguisherMethod == nil {
		return ""
	}
	switch fs.Spec.DistinguisherMethod.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return r.User
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return r.Namespace
	}
	return ""
}
