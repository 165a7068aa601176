package validatingadmissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Name is the plugin's name in kube-apiserver.
const Name = "ValidatingAdmissionPolicy"

// FailureAnnotation is the audit annotation of the validations failed
// with the Audit action.
const FailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// maxAuditAnnotationValue is kube-apiserver's limit on a published audit
// annotation's value; maxValidationFailures on the failures recorded.
const (
	maxAuditAnnotationValue = 10 * 1024
	maxValidationFailures   = 50
)

var (
	policiesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	bindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
)

// Plugin is the ValidatingAdmissionPolicy plugin.
type Plugin struct {
	annotate func(ctx context.Context, key, value string)
	cache    policycel.Cache[*compiled]
}

// New returns the plugin; annotate records audit annotations (nil: none).
func New(annotate func(ctx context.Context, key, value string)) *Plugin {
	if annotate == nil {
		annotate = func(context.Context, string, string) {}
	}
	return &Plugin{annotate: annotate}
}

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return Name }

// Validate evaluates the policies on creates, updates and deletes.
func (p *Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	return nil, p.dispatch(ctx, env, a)
}

// hook is one policy with its bindings.
type hook struct {
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// hooks reads the policies and their bindings from the watch caches, by
// name.
func (p *Plugin) hooks(ctx context.Context, env registry.Env) ([]hook, error) {
	pols, binds := env.Objects(policiesGVR), env.Objects(bindingsGVR)
	if pols == nil || binds == nil {
		return nil, nil
	}
	policies, err := listCached(ctx, pols)
	if err != nil {
		return nil, err
	}
	if len(policies) == 0 {
		p.cache.Prune(nil)
		return nil, nil
	}
	bindings, err := listCached(ctx, binds)
	if err != nil {
		return nil, err
	}
	byPolicy := map[string][]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, o := range bindings {
		if b, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok {
			byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
		}
	}
	live := map[types.UID]bool{}
	var out []hook
	for _, o := range policies {
		pol, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if !ok {
			continue
		}
		live[pol.UID] = true
		if bs := byPolicy[pol.Name]; len(bs) > 0 {
			sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
			out = append(out, hook{policy: pol, bindings: bs})
		}
	}
	p.cache.Prune(live)
	sort.Slice(out, func(i, j int) bool { return out[i].policy.Name < out[j].policy.Name })
	return out, nil
}

func listCached(ctx context.Context, objs registry.Objects) ([]runtime.Object, error) {
	if cl, ok := objs.(registry.CachedLister); ok {
		return cl.ListCached(ctx, "", nil, nil)
	}
	return objs.List(ctx, "", nil, nil)
}

// denial is a deny decision with the policy and binding it came from.
type denial struct {
	decision
	policy, binding string
}

// validationFailure is one entry of the validation_failure audit
// annotation.
type validationFailure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// dispatch evaluates every bound policy matching a, as kube-apiserver's
// validating policy dispatcher.
func (p *Plugin) dispatch(ctx context.Context, env registry.Env, a *registry.Attributes) error {
	if policycel.Exempt(a) {
		return nil
	}
	hooks, err := p.hooks(ctx, env)
	if err != nil || len(hooks) == 0 {
		return err
	}
	var denials []denial
	var failures []validationFailure
	configError := func(pol *admissionregistrationv1.ValidatingAdmissionPolicy, binding string, err error) {
		switch f := failurePolicy(pol); f {
		case admissionregistrationv1.Ignore:
		case admissionregistrationv1.Fail:
			msg := fmt.Sprintf("failed to configure policy: %v", err)
			if binding != "" {
				msg = fmt.Sprintf("failed to configure binding: %v", err)
			}
			denials = append(denials, denial{decision: decision{deny: true, message: msg}, policy: pol.Name, binding: binding})
		default:
			denials = append(denials, denial{decision: decision{deny: true, message: fmt.Sprintf("unrecognized failure policy: '%v'", f)}, policy: pol.Name, binding: binding})
		}
	}
	base, err := p.input(ctx, env, a)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		pol := h.policy
		if pol.Spec.MatchConstraints == nil {
			configError(pol, "", errNoMatchConstraints)
			continue
		}
		ok, gvr, gvk, err := policycel.Matches(ctx, env, a, pol.Spec.MatchConstraints)
		if err != nil {
			configError(pol, "", err)
			continue
		}
		if !ok {
			continue
		}
		polBase := base
		if va, err := policycel.Versioned(ctx, env, a, gvr); err != nil {
			return err
		} else if va != a {
			if polBase, err = p.input(ctx, env, va); err != nil {
				return err
			}
			polBase.Resource = base.Resource // the authorizer's requestResource is the client's
		}
		cp := p.cache.Get(pol, func() *compiled { return compile(pol) })
		annotations := newCollector()
		for _, b := range h.bindings {
			if b.Spec.MatchResources != nil {
				ok, _, _, err := policycel.Matches(ctx, env, a, b.Spec.MatchResources)
				if err != nil {
					configError(pol, b.Name, err)
					continue
				}
				if !ok {
					continue
				}
			}
			params, err := policycel.Params(ctx, env, pol.Spec.ParamKind, b.Spec.ParamRef, a.Namespace)
			if err != nil {
				configError(pol, b.Name, err)
				continue
			}
			in := *polBase
			in.Request = policycel.Request(a, gvr, gvk)
			for _, param := range params {
				in.Params = param
				for _, d := range cp.validate(ctx, &in) {
					if !d.deny {
						continue
					}
					for _, action := range b.Spec.ValidationActions {
						switch action {
						case admissionregistrationv1.Deny:
							denials = append(denials, denial{decision: d, policy: pol.Name, binding: b.Name})
						case admissionregistrationv1.Audit:
							failures = append(failures, validationFailure{Message: d.message, Policy: b.Spec.PolicyName,
								Binding: b.Name, ExpressionIndex: d.index, ValidationActions: b.Spec.ValidationActions})
						case admissionregistrationv1.Warn:
							registry.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", pol.Name, b.Name, d.message))
						}
					}
				}
				results, errD := cp.evalAuditAnnotations(ctx, &in)
				if errD != nil && errD.deny {
					denials = append(denials, denial{decision: *errD, policy: pol.Name, binding: b.Name})
				}
				for _, r := range results {
					switch {
					case r.err != "":
						denials = append(denials, denial{decision: decision{deny: true, evalErr: true, message: r.err}, policy: pol.Name, binding: b.Name})
					case r.publish:
						v := r.value
						if len(v) > maxAuditAnnotationValue {
							v = v[:maxAuditAnnotationValue]
						}
						annotations.add(r.key, v)
					}
				}
			}
		}
		annotations.publish(ctx, pol.Name, p.annotate)
	}
	if len(failures) > 0 {
		if len(failures) > maxValidationFailures {
			failures = failures[:maxValidationFailures]
		}
		if v, err := json.Marshal(failures); err == nil {
			p.annotate(ctx, FailureAnnotation, string(v))
		}
	}
	if len(denials) == 0 {
		return nil
	}
	return refusal(a, denials[0])
}

// input is what every evaluation of a sees.
func (p *Plugin) input(ctx context.Context, env registry.Env, a *registry.Attributes) (*policycel.Input, error) {
	gvk := policycel.RequestGVK(a)
	obj, err := policycel.ToMap(a.Object, gvk)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	old, err := policycel.ToMap(a.Old, gvk)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	in := &policycel.Input{
		Object: obj, OldObject: old,
		User:  policycel.UserInfo(a.User),
		Authz: policycel.Authorizer(env.Authorizer()),
		Resource: policycel.ResourceRef{GVR: policycel.RequestGVR(a), Subresource: a.Subresource,
			Namespace: a.Namespace, Name: a.Name},
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

// refusal is kube-apiserver's error for a denied request: 403's wording
// (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'p' with
// binding 'b' denied request: <message>`) with the validation's reason
// (Invalid by default) and its code.
func refusal(a *registry.Attributes, d denial) error {
	var msg string
	if d.binding != "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	} else {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	var se *apierrors.StatusError
	if !errors.As(apierrors.NewForbidden(admission.GroupResource(a), admission.Name(a), errors.New(msg)), &se) {
		return apierrors.NewInternalError(errors.New(msg))
	}
	r := d.reason
	if r == "" {
		r = metav1.StatusReasonInvalid
	}
	se.ErrStatus.Reason = r
	se.ErrStatus.Code = reasonCode(r)
	se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return se
}

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

// collector gathers a policy's audit annotations over its bindings:
// distinct values of one key are joined with ", ".
type collector map[string][]string

func newCollector() collector { return collector{} }

func (c collector) add(key, value string) {
	for _, v := range c[key] {
		if v == value {
			return
		}
	}
	c[key] = append(c[key], value)
}

func (c collector) publish(ctx context.Context, policy string, annotate func(context.Context, string, string)) {
	for k, vs := range c {
		annotate(ctx, policy+"/"+k, strings.Join(vs, ", "))
	}
}
