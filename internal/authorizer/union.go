package authorizer

import (
	"context"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// union asks its authorizers in order; see Union.
type union []Authorizer

// Union combines authorizers as kube-apiserver's union does: the first
// Allow or Deny decides, with that authorizer's reason and error; when
// every one has no opinion, the answer is NoOpinion with the reasons
// joined by newlines and the errors aggregated. RulesFor concatenates the
// rules of every authorizer; the list is incomplete when any one is.
func Union(authorizers ...Authorizer) Authorizer {
	return union(slices.Clone(authorizers))
}

func (u union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var (
		errs    []error
		reasons []string
	)
	for _, az := range u {
		d, reason, err := az.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		if d == DecisionAllow || d == DecisionDeny {
			return d, reason, err
		}
	}
	return DecisionNoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

func (u union) RulesFor(ctx context.Context, user User, namespace string) ([]ResourceRule, []NonResourceRule, bool, error) {
	var (
		res        []ResourceRule
		nonRes     []NonResourceRule
		incomplete bool
		errs       []error
	)
	for _, az := range u {
		r, n, inc, err := az.RulesFor(ctx, user, namespace)
		res, nonRes = append(res, r...), append(nonRes, n...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return res, nonRes, incomplete, utilerrors.NewAggregate(errs)
}

// SystemMasters is the group whose members kube-apiserver allows
// everything before asking any other authorizer.
const SystemMasters = "system:masters"

// PrivilegedGroups allows every request of a member of one of groups, with
// no reason, and has no opinion on anyone else, as kube-apiserver's
// authorizer of its privileged group (system:masters). It lists no rules:
// what a member holds through bindings is what other authorizers list.
func PrivilegedGroups(groups ...string) Authorizer {
	return privileged(slices.Clone(groups))
}

type privileged []string

func (p privileged) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	for _, g := range a.User.Groups {
		if slices.Contains(p, g) {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

func (privileged) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return nil, nil, false, nil
}

// AlwaysDeny is kube-apiserver's --authorization-mode=AlwaysDeny: it has
// no opinion on any request, with the reason "Everything is forbidden.",
// so that a request nothing else allows is refused; it lists no rules.
type AlwaysDeny struct{}

// Authorize answers NoOpinion with kube-apiserver's reason.
func (AlwaysDeny) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, "Everything is forbidden.", nil
}

// RulesFor returns no rules.
func (AlwaysDeny) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return nil, nil, false, nil
}

// Named prefixes the reason of a NoOpinion with "name: ", as
// kube-apiserver words the reasons of the authorizers of its
// --authorization-mode list (each named after its mode in lower case:
// "rbac: RBAC: clusterrole… not found", "node: no relationship found…");
// the reasons of an Allow or a Deny stay as they are.
func Named(name string, a Authorizer) Authorizer { return named{name: name, Authorizer: a} }

type named struct {
	name string
	Authorizer
}

func (n named) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	d, reason, err := n.Authorizer.Authorize(ctx, a)
	if d == DecisionNoOpinion && reason != "" {
		reason = n.name + ": " + reason
	}
	return d, reason, err
}
