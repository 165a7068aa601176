package mutatingadmissionpolicy

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Name is the plugin's name in kube-apiserver.
const Name = "MutatingAdmissionPolicy"

var (
	policiesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	bindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)

// Plugin is the MutatingAdmissionPolicy plugin.
type Plugin struct {
	cache policycel.Cache[*compiled]
}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return Name }

// invocation is one policy, binding and param that apply to a request.
type invocation struct {
	cp      *compiled
	binding string
	params  map[string]any
	input   *policycel.Input
	// at is the equivalent resource the policy matched (matchPolicy
	// Equivalent), whose version it mutates the object at; nil for the
	// request's own (equivalent.go).
	at *registry.Resource
}

// policyError is an error of one policy (and binding), acted on as its
// failurePolicy says.
type policyError struct {
	policy  *admissionregistrationv1.MutatingAdmissionPolicy
	binding string
	err     error
	reason  metav1.StatusReason
}

func (e policyError) message() string {
	if e.binding != "" {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy.Name, e.binding, e.err)
	}
	return fmt.Sprintf("policy %q denied request: %s", e.policy.Name, e.err)
}

// Admit mutates the creates and updates the bound policies match.
func (p *Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Object == nil || policycel.Exempt(a) {
		return nil, nil
	}
	pols, binds := env.Objects(policiesGVR), env.Objects(bindingsGVR)
	if pols == nil || binds == nil {
		return nil, nil
	}
	policies, err := listCached(ctx, pols)
	if err != nil || len(policies) == 0 {
		if len(policies) == 0 {
			p.cache.Prune(nil)
		}
		return nil, err
	}
	bindings, err := listCached(ctx, binds)
	if err != nil {
		return nil, err
	}
	invs, errs, err := p.invocations(ctx, env, a, policies, bindings)
	if err != nil {
		return nil, err
	}
	if len(invs) > 0 {
		more, err := p.mutate(ctx, env, a, invs)
		if err != nil {
			return nil, err
		}
		errs = append(errs, more...)
	}
	return nil, refusal(a, errs)
}

func listCached(ctx context.Context, objs registry.Objects) ([]runtime.Object, error) {
	if cl, ok := objs.(registry.CachedLister); ok {
		return cl.ListCached(ctx, "", nil, nil)
	}
	return objs.List(ctx, "", nil, nil)
}

// invocations matches the policies and bindings against a and reads the
// params, in the order of the policies' and bindings' names.
func (p *Plugin) invocations(ctx context.Context, env registry.Env, a *registry.Attributes, policies, bindings []runtime.Object) ([]invocation, []policyError, error) {
	byPolicy := map[string][]*admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	for _, o := range bindings {
		if b, ok := o.(*admissionregistrationv1.MutatingAdmissionPolicyBinding); ok {
			byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
		}
	}
	var pols []*admissionregistrationv1.MutatingAdmissionPolicy
	live := map[types.UID]bool{}
	for _, o := range policies {
		if pol, ok := o.(*admissionregistrationv1.MutatingAdmissionPolicy); ok {
			live[pol.UID] = true
			pols = append(pols, pol)
		}
	}
	p.cache.Prune(live)
	sort.Slice(pols, func(i, j int) bool { return pols[i].Name < pols[j].Name })
	var invs []invocation
	var errs []policyError
	var base *policycel.Input
	for _, pol := range pols {
		bs := byPolicy[pol.Name]
		if len(bs) == 0 || pol.Spec.MatchConstraints == nil {
			continue
		}
		ok, gvr, gvk, err := policycel.Matches(ctx, env, a, pol.Spec.MatchConstraints)
		if err != nil {
			errs = append(errs, policyError{policy: pol, err: fmt.Errorf("failed to configure policy: %w", err)})
			continue
		}
		if !ok {
			continue
		}
		at, atBase, err := equivalentAt(ctx, env, a, gvr)
		if err != nil {
			return nil, nil, err
		}
		sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
		for _, b := range bs {
			if b.Spec.MatchResources != nil {
				ok, _, _, err := policycel.Matches(ctx, env, a, b.Spec.MatchResources)
				if err != nil {
					errs = append(errs, policyError{policy: pol, binding: b.Name, err: fmt.Errorf("failed to configure binding: %w", err)})
					continue
				}
				if !ok {
					continue
				}
			}
			params, err := policycel.Params(ctx, env, pol.Spec.ParamKind, b.Spec.ParamRef, a.Namespace)
			if err != nil {
				errs = append(errs, policyError{policy: pol, binding: b.Name, err: fmt.Errorf("failed to configure binding: %w", err)})
				continue
			}
			if base == nil {
				if base, err = baseInput(ctx, env, a); err != nil {
					return nil, nil, err
				}
			}
			cp := p.cache.Get(pol, func() *compiled { return compile(pol) })
			polBase := base
			if at != nil {
				if polBase, err = baseInput(ctx, env, atBase); err != nil {
					return nil, nil, err
				}
				polBase.Resource = base.Resource // the authorizer's requestResource is the client's
			}
			for _, param := range params {
				in := *polBase
				in.Request = policycel.Request(a, gvr, gvk)
				in.Params = param
				invs = append(invs, invocation{cp: cp, binding: b.Name, params: param, input: &in, at: at})
			}
		}
	}
	return invs, errs, nil
}

// baseInput is what every evaluation of a sees but the object.
func baseInput(ctx context.Context, env registry.Env, a *registry.Attributes) (*policycel.Input, error) {
	gvk := policycel.RequestGVK(a)
	old, err := policycel.ToMap(a.Old, gvk)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	in := &policycel.Input{
		OldObject: old, User: policycel.UserInfo(a.User), Authz: policycel.Authorizer(env.Authorizer()),
		Resource: policycel.ResourceRef{GVR: policycel.RequestGVR(a), Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name},
	}
	if a.Namespace != "" {
		ns, err := policycel.Namespace(ctx, env, a.Namespace)
		if err != nil {
			return nil, err
		}
		in.Namespace = policycel.NamespaceObject(ns)
	}
	return in, nil
}

// mutate runs the invocations in order on a's object, then once more
// those with reinvocationPolicy IfNeeded that ran before a later one
// changed the object.
func (p *Plugin) mutate(ctx context.Context, env registry.Env, a *registry.Attributes, invs []invocation) ([]policyError, error) {
	obj, err := policycel.ToMap(a.Object, policycel.RequestGVK(a))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var tc = typeConverter(env, a)
	var errs []policyError
	lastChange := -1
	for i := range invs {
		next, perrs, err := invs[i].runAt(ctx, env, a, tc, obj)
		if err != nil {
			return nil, err
		}
		errs = append(errs, perrs...)
		if !apiequality.Semantic.DeepEqual(next, obj) {
			lastChange = i
		}
		obj = next
	}
	for i := 0; i < lastChange; i++ {
		if invs[i].cp.policy.Spec.ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy {
			continue
		}
		next, perrs, err := invs[i].runAt(ctx, env, a, tc, obj)
		if err != nil {
			return nil, err
		}
		errs = append(errs, perrs...)
		obj = next
	}
	if err := store(a, obj); err != nil {
		return nil, err
	}
	return errs, nil
}

func typeConverter(env registry.Env, a *registry.Attributes) interface{} {
	if s, ok := env.(registry.TypeConverterSource); ok {
		if tc := s.TypeConverterFor(policycel.RequestGVR(a)); tc != nil {
			return tc
		}
	}
	return nil
}

// run evaluates one invocation's match conditions and mutations on obj.
func (inv *invocation) run(ctx context.Context, tc interface{}, obj map[string]any) (map[string]any, []policyError) {
	cp := inv.cp
	fail := func(err error) policyError {
		return policyError{policy: cp.policy, binding: inv.binding, err: err, reason: metav1.StatusReasonInvalid}
	}
	if cp.err != nil {
		return obj, []policyError{fail(cp.err)}
	}
	in := *inv.input
	in.Object = obj
	if ok, err := cp.evalMatchConditions(ctx, &in); err != nil {
		return obj, []policyError{fail(err)}
	} else if !ok {
		return obj, nil
	}
	var errs []policyError
	for i, m := range cp.mutations {
		if m == nil {
			continue
		}
		in.Object = obj
		act := cp.compiler.NewActivation(ctx, &in, true)
		r, _, err := act.Eval(m, policycel.RuntimeCostBudget)
		if err == nil {
			err = r.Err
		}
		if err == nil {
			var next map[string]any
			if cp.policy.Spec.Mutations[i].PatchType == admissionregistrationv1.PatchTypeJSONPatch {
				next, err = jsonPatch(obj, r.Value)
			} else {
				next, err = applyWith(tc, obj, r)
			}
			if err == nil {
				obj = next
			}
		}
		if err != nil {
			errs = append(errs, fail(err))
		}
	}
	return obj, errs
}

// evalMatchConditions: whether the mutations run, or the error the
// failure policy acts on (Ignore: no match).
func (cp *compiled) evalMatchConditions(ctx context.Context, in *policycel.Input) (bool, error) {
	if len(cp.matchConditions) == 0 {
		return true, nil
	}
	noNamespace := *in
	noNamespace.Namespace = nil
	act := cp.compiler.NewActivation(ctx, &noNamespace, true)
	budget := int64(policycel.MatchConditionsCostBudget)
	var errs []error
	ignore := cp.policy.Spec.FailurePolicy != nil && *cp.policy.Spec.FailurePolicy == admissionregistrationv1.Ignore
	for _, c := range cp.matchConditions {
		r, left, err := act.Eval(c, budget)
		if err != nil {
			if ignore {
				return false, nil
			}
			return false, err
		}
		budget = left
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		if r.Value == celtypes.False {
			return false, nil
		}
	}
	if len(errs) > 0 {
		if ignore {
			return false, nil
		}
		if len(errs) == 1 {
			return false, errs[0]
		}
		msg := "["
		for i, e := range errs {
			if i > 0 {
				msg += ", "
			}
			msg += e.Error()
		}
		return false, errors.New(msg + "]")
	}
	return true, nil
}

// store writes the mutated object back into a.Object (in place: the
// server holds the pointer), defaulted as a decoded object is.
func store(a *registry.Attributes, obj map[string]any) error {
	if u, ok := a.Object.(*unstructured.Unstructured); ok {
		u.Object = obj
		return nil
	}
	fresh, err := decodeLike(a.Object, a.Resource, obj)
	if err != nil {
		return err
	}
	gvk := a.Object.GetObjectKind().GroupVersionKind()
	reflect.ValueOf(a.Object).Elem().Set(reflect.ValueOf(fresh).Elem())
	a.Object.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// refusal is kube-apiserver's error for the policy errors whose
// failurePolicy is Fail: 403, the first error's message and reason, every
// error a cause.
func refusal(a *registry.Attributes, errs []policyError) error {
	var failed []policyError
	for _, e := range errs {
		if e.policy.Spec.FailurePolicy != nil && *e.policy.Spec.FailurePolicy == admissionregistrationv1.Ignore {
			continue
		}
		failed = append(failed, e)
	}
	if len(failed) == 0 {
		return nil
	}
	var se *apierrors.StatusError
	if !errors.As(apierrors.NewForbidden(admission.GroupResource(a), admission.Name(a), errors.New("admission request denied by policy")), &se) {
		return apierrors.NewInternalError(errors.New(failed[0].message()))
	}
	se.ErrStatus.Message = failed[0].message()
	if failed[0].reason != "" {
		se.ErrStatus.Reason = failed[0].reason
	}
	for _, e := range failed {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: e.message()})
	}
	return se
}
