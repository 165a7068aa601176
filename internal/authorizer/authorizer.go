package authorizer

import (
	"context"

	"k8s.io/apimachinery/pkg/fields"
)

// User is the identity a decision is about.
type User struct {
	Name, UID string
	Groups    []string
	Extra     map[string][]string
}

// Attributes describe one request to authorize: a resource request (verb,
// group, resource, namespace, name) or a non-resource request (verb,
// path), as kube-apiserver's authorizer attributes.
type Attributes struct {
	User User
	// Verb is the API verb (get, list, create, …) of a resource request,
	// or the lower-case HTTP method of a non-resource request.
	Verb string
	// ResourceRequest is true for requests on API resources.
	ResourceRequest bool
	// Namespace, APIGroup, APIVersion, Resource, Subresource and Name
	// locate a resource request ("*" where any is meant).
	Namespace, APIGroup, APIVersion, Resource, Subresource, Name string
	// Path is the URL path of a non-resource request.
	Path string
	// FieldSelector is the request's parsed fieldSelector (list, watch,
	// deletecollection), nil when it has none; the Node authorizer lets a
	// node list its own pods by spec.nodeName. As kube-apiserver's request
	// info, a list or watch whose field selector is metadata.name=x has
	// Name x.
	FieldSelector fields.Requirements
}

// Decision is the answer of an authorizer.
type Decision int

const (
	// DecisionDeny means the request is refused, and no other authorizer
	// may allow it.
	DecisionDeny Decision = iota
	// DecisionAllow means the request is allowed.
	DecisionAllow
	// DecisionNoOpinion means this authorizer neither allows nor denies.
	DecisionNoOpinion
)

// ResourceRule is a rule on API resources a user holds.
type ResourceRule struct {
	Verbs, APIGroups, Resources, ResourceNames []string
}

// NonResourceRule is a rule on non-resource paths a user holds.
type NonResourceRule struct {
	Verbs, NonResourceURLs []string
}

// Authorizer decides requests and lists the rules users hold.
type Authorizer interface {
	// Authorize decides a; reason explains the decision (may be empty).
	// An error means the decision could not be fully evaluated; the
	// decision still stands.
	Authorize(ctx context.Context, a Attributes) (decision Decision, reason string, err error)
	// RulesFor lists the rules user holds in namespace. incomplete is true
	// when the list may miss rules (an authorizer that cannot list its
	// rules); err reports what could not be evaluated.
	RulesFor(ctx context.Context, user User, namespace string) (resource []ResourceRule, nonResource []NonResourceRule, incomplete bool, err error)
}

// AlwaysAllow allows every request, as kube-apiserver's
// --authorization-mode=AlwaysAllow: no reason, and one rule granting
// everything.
type AlwaysAllow struct{}

// Authorize allows a, with no reason.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
}

// RulesFor returns "*" on every resource and every non-resource path.
func (AlwaysAllow) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	all := []string{"*"}
	return []ResourceRule{{Verbs: all, APIGroups: all, Resources: all}},
		[]NonResourceRule{{Verbs: all, NonResourceURLs: all}}, false, nil
}
