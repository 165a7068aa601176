package webhook

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

var (
	validatingGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	mutatingGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
)

// hook is one webhook of a configuration, compiled: selectors parsed,
// match conditions compiled, defaults applied.
type hook struct {
	name, config string
	// id names the hook for reinvocation: configuration and index.
	id          string
	rules       []admissionregistrationv1.RuleWithOperations
	equivalent  bool
	nsSel       labels.Selector
	objSel      labels.Selector
	nsSelErr    error
	objSelErr   error
	conditions  *conditions
	failOpen    bool
	sideEffects *admissionregistrationv1.SideEffectClass
	timeout     time.Duration
	versions    []string
	client      webhookclient.ClientConfig
	// reinvoke is reinvocationPolicy IfNeeded (mutating only).
	reinvoke bool
}

// snapshot is the compiled hooks of one set of configuration objects.
type snapshot struct {
	objs  []runtime.Object // the cache's objects, compared by identity
	hooks []*hook
}

// source keeps the webhooks of one configuration resource compiled. The
// configurations are read from the server's watch cache as it is (kube's
// informer); the compiled form is rebuilt only when an object changed.
type source struct {
	mutating bool
	mu       sync.Mutex
	cur      atomic.Pointer[snapshot]
}

// hooks returns the webhooks of the current configurations, in kube's
// order: configurations by name, webhooks in their order.
func (s *source) hooks(ctx context.Context, env registry.Env) ([]*hook, error) {
	gvr := validatingGVR
	if s.mutating {
		gvr = mutatingGVR
	}
	objs := env.Objects(gvr)
	if objs == nil {
		return nil, nil
	}
	var list []runtime.Object
	var err error
	cl, cached := objs.(registry.CachedLister)
	if cached {
		list, err = cl.ListCached(ctx, "", nil, nil)
	}
	if !cached || err != nil {
		// No cache, or not ready yet: a consistent read, which waits.
		list, err = objs.List(ctx, "", nil, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gvr.Resource, err)
	}
	if snap := s.cur.Load(); snap != nil && sameObjects(snap.objs, list) {
		return snap.hooks, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap := s.cur.Load(); snap != nil && sameObjects(snap.objs, list) {
		return snap.hooks, nil
	}
	snap := &snapshot{objs: list, hooks: compileAll(list, s.mutating)}
	s.cur.Store(snap)
	return snap.hooks, nil
}

// sameObjects: the cache hands out the same object pointers until an
// object changes.
func sameObjects(a, b []runtime.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type configObject struct {
	meta  metav1.Object
	hooks []*hook
}

func compileAll(list []runtime.Object, mutating bool) []*hook {
	var cfgs []configObject
	for _, o := range list {
		switch c := o.(type) {
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			if mutating {
				continue
			}
			co := configObject{meta: c}
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				co.hooks = append(co.hooks, compileHook(c.Name, i, w.Name, w.Rules, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
					w.MatchConditions, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ClientConfig, nil))
			}
			cfgs = append(cfgs, co)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			if !mutating {
				continue
			}
			co := configObject{meta: c}
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				co.hooks = append(co.hooks, compileHook(c.Name, i, w.Name, w.Rules, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
					w.MatchConditions, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ClientConfig, w.ReinvocationPolicy))
			}
			cfgs = append(cfgs, co)
		}
	}
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].meta.GetName() < cfgs[j].meta.GetName() })
	var out []*hook
	for _, c := range cfgs {
		out = append(out, c.hooks...)
	}
	return out
}

func compileHook(config string, idx int, name string, rules []admissionregistrationv1.RuleWithOperations,
	mp *admissionregistrationv1.MatchPolicyType, nsSel, objSel *metav1.LabelSelector, conds []admissionregistrationv1.MatchCondition,
	fp *admissionregistrationv1.FailurePolicyType, se *admissionregistrationv1.SideEffectClass, timeout *int32, versions []string,
	cc admissionregistrationv1.WebhookClientConfig, reinvoke *admissionregistrationv1.ReinvocationPolicyType) *hook {
	h := &hook{
		name: name, config: config, id: fmt.Sprintf("%s/%s/%d", config, name, idx),
		rules:       rules,
		equivalent:  mp == nil || *mp == admissionregistrationv1.Equivalent,
		failOpen:    fp != nil && *fp == admissionregistrationv1.Ignore,
		sideEffects: se,
		timeout:     10 * time.Second,
		versions:    versions,
		client:      webhookclient.FromAdmission(cc),
		reinvoke:    reinvoke != nil && *reinvoke == admissionregistrationv1.IfNeededReinvocationPolicy,
	}
	if timeout != nil {
		h.timeout = time.Duration(*timeout) * time.Second
	}
	h.nsSel, h.nsSelErr = selector(nsSel)
	h.objSel, h.objSelErr = selector(objSel)
	if len(conds) > 0 {
		h.conditions = compileConditions(conds, fp)
	}
	return h
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}
