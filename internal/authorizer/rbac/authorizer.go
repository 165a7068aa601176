package rbac

import (
	"context"
	"sync"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// Authorizer is the RBAC authorizer. Its owner feeds it the four RBAC
// resources (Replace with a full list, then Set and Delete for each
// change); it answers from what it was fed. Safe for concurrent use.
type Authorizer struct {
	mu    sync.Mutex // serializes feeding and snapshot builds
	objs  store
	sync  *syncState
	snap  atomic.Pointer[snapshot] // nil after a change, until rebuilt
	ready atomic.Bool
	// notFound, when set, names the missing roles' NotFound errors.
	notFound *schema.GroupResource
}

// New returns an authorizer that knows no objects yet: until every
// resource has had its first Replace, Authorize and RulesFor wait.
func New() *Authorizer {
	return &Authorizer{objs: newStore(), sync: newSyncState()}
}

// Replace sets every object of resource (one of Resources) to objs.
func (a *Authorizer) Replace(resource string, objs []runtime.Object) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.objs.clear(resource); err != nil {
		return err
	}
	for _, o := range objs {
		if err := a.objs.put(o, false); err != nil {
			return err
		}
	}
	a.snap.Store(nil)
	a.sync.replaced(resource)
	return nil
}

// Set records a created or updated Role, ClusterRole, RoleBinding or
// ClusterRoleBinding. obj is kept, not copied: it must not change.
func (a *Authorizer) Set(obj runtime.Object) error { return a.change(obj, false) }

// Delete forgets a deleted object.
func (a *Authorizer) Delete(obj runtime.Object) error { return a.change(obj, true) }

func (a *Authorizer) change(obj runtime.Object, del bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.objs.put(obj, del); err != nil {
		return err
	}
	a.snap.Store(nil)
	return nil
}

// NotFoundAs makes the errors of missing roles NotFound errors of gr, as
// kube-apiserver's registry reports them to the escalation checks of a
// write of gr (`rolebindings.rbac.authorization.k8s.io "r" not found`).
// Call it before the first decision.
func (a *Authorizer) NotFoundAs(gr schema.GroupResource) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notFound = &gr
	a.snap.Store(nil)
}

// Synced is closed once every resource has had its first Replace.
func (a *Authorizer) Synced() <-chan struct{} { return a.sync.done }

// current returns the snapshot, building it after a change; it waits for
// the first full lists.
func (a *Authorizer) current(ctx context.Context) (*snapshot, error) {
	if !a.ready.Load() {
		select {
		case <-a.sync.done:
			a.ready.Store(true)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s := a.snap.Load(); s != nil {
		return s, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.snap.Load()
	if s == nil {
		s = buildSnapshot(&a.objs)
		s.notFound = a.notFound
		a.snap.Store(s)
	}
	return s, nil
}

// Authorize allows a request that a rule of the user's bindings grants,
// with the reason "RBAC: allowed by <binding>"; otherwise it has no
// opinion (RBAC never denies), with the errors met resolving the bindings
// (a missing role) as the reason, "RBAC: <errors>". The error is non-nil
// only when the context ends before the first lists arrived.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	s, err := a.current(ctx)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	r := s.rulesFor(&attrs.User, attrs.Namespace)
	for i := range r.sets {
		set := &r.sets[i]
		for j := range set.rules {
			if RuleAllows(attrs, &set.rules[j]) {
				return authorizer.DecisionAllow, set.allowed, nil
			}
		}
	}
	if len(r.errs) > 0 {
		return authorizer.DecisionNoOpinion, "RBAC: " + utilerrors.NewAggregate(r.errs).Error(), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// Rules returns the policy rules user holds in namespace (cluster-wide
// ones only for ""), and the errors met resolving them, as Kubernetes'
// rule resolver: the escalation checks compare against them.
func (a *Authorizer) Rules(ctx context.Context, user authorizer.User, namespace string) ([]rbacv1.PolicyRule, error) {
	s, err := a.current(ctx)
	if err != nil {
		return nil, err
	}
	r := s.rulesFor(&user, namespace)
	var rules []rbacv1.PolicyRule
	for _, set := range r.sets {
		rules = append(rules, set.rules...)
	}
	return rules, utilerrors.NewAggregate(r.errs)
}

// RoleRefRules returns the rules of the role a binding in namespace
// ("" for a ClusterRoleBinding) refers to, or the error of a missing one.
func (a *Authorizer) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	s, err := a.current(ctx)
	if err != nil {
		return nil, err
	}
	return s.roleRefRules(ref, namespace)
}

// RulesFor lists the user's rules in namespace as SelfSubjectRulesReview
// shows them: rules on resources, then rules on non-resource URLs, in
// binding order; never incomplete; the error aggregates the missing
// roles.
func (a *Authorizer) RulesFor(ctx context.Context, user authorizer.User, namespace string) ([]authorizer.ResourceRule, []authorizer.NonResourceRule, bool, error) {
	rules, err := a.Rules(ctx, user, namespace)
	var (
		res    []authorizer.ResourceRule
		nonRes []authorizer.NonResourceRule
	)
	for _, r := range rules {
		if len(r.Resources) > 0 {
			res = append(res, authorizer.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nonRes = append(nonRes, authorizer.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return res, nonRes, false, err
}
