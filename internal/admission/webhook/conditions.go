package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	kubeauthz "k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// conditions are a webhook's compiled matchConditions.
type conditions struct {
	exprs    []string
	programs []cel.Program
	errs     []error // compile errors, by index
	failOpen bool
}

func compileConditions(conds []admissionregistrationv1.MatchCondition, fp *admissionregistrationv1.FailurePolicyType) *conditions {
	c := &conditions{failOpen: fp != nil && *fp == admissionregistrationv1.Ignore}
	for _, mc := range conds {
		p, err := admissioncel.MatchConditionProgram(mc.Expression)
		c.exprs = append(c.exprs, mc.Expression)
		c.programs = append(c.programs, p)
		c.errs = append(c.errs, err)
	}
	return c
}

// errOutOfBudget is kube's message when the conditions of one webhook
// spend more than their runtime cost budget.
var errOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// match evaluates the conditions as kube's matcher: any false one means no
// match; errors fail the request (Fail) or skip the webhook (Ignore).
func (c *conditions) match(ctx context.Context, env registry.Env, r *request) (bool, error) {
	vars, err := conditionVars(ctx, env, r)
	if err != nil {
		if c.failOpen {
			return false, nil
		}
		return false, err
	}
	budget := int64(celconfig.RuntimeCELCostBudgetMatchConditions)
	var errs []error
	for i, p := range c.programs {
		if c.errs[i] != nil {
			errs = append(errs, fmt.Errorf("compilation error: %v", c.errs[i]))
			continue
		}
		out, det, err := p.ContextEval(ctx, vars)
		if det != nil && det.ActualCost() != nil {
			budget -= int64(*det.ActualCost())
		}
		if budget < 0 {
			if c.failOpen {
				return false, nil
			}
			return false, errOutOfBudget
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("expression '%v' resulted in error: %v", c.exprs[i], err))
			continue
		}
		if out == celtypes.False {
			return false, nil
		}
	}
	if len(errs) > 0 {
		if c.failOpen {
			return false, nil
		}
		return false, utilerrors.NewAggregate(errs)
	}
	return true, nil
}

// conditionVars is the activation of match conditions: object,
// oldObject, request, authorizer and authorizer.requestResource.
func conditionVars(ctx context.Context, env registry.Env, r *request) (map[string]any, error) {
	obj, err := toMap(r.a.Object, r.gvk)
	if err != nil {
		return nil, fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
	}
	old, err := toMap(r.a.Old, r.gvk)
	if err != nil {
		return nil, fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
	}
	req, err := requestMap(r)
	if err != nil {
		return nil, err
	}
	vars := map[string]any{"object": nilIfEmpty(obj), "oldObject": nilIfEmpty(old), "request": req}
	if az := env.Authorizer(); az != nil {
		u := &user.DefaultInfo{Name: r.a.User.Name, UID: r.a.User.UID, Groups: r.a.User.Groups, Extra: r.a.User.Extra}
		ka := kubeAuthorizer{az}
		vars["authorizer"] = library.NewAuthorizerVal(u, ka)
		vars["authorizer.requestResource"] = library.NewResourceAuthorizerVal(u, ka, resourceOf{r})
	}
	return vars, nil
}

func nilIfEmpty(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// kubeAuthorizer asks the server's authorizer the questions of CEL's
// authorizer library.
type kubeAuthorizer struct{ az authorizer.Authorizer }

func (k kubeAuthorizer) Authorize(ctx context.Context, a kubeauthz.Attributes) (kubeauthz.Decision, string, error) {
	u := a.GetUser()
	attrs := authorizer.Attributes{
		Verb: a.GetVerb(), ResourceRequest: a.IsResourceRequest(), Namespace: a.GetNamespace(),
		APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(), Resource: a.GetResource(),
		Subresource: a.GetSubresource(), Name: a.GetName(), Path: a.GetPath(),
	}
	if u != nil {
		attrs.User = authorizer.User{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
	}
	d, reason, err := k.az.Authorize(ctx, attrs)
	switch d {
	case authorizer.DecisionAllow:
		return kubeauthz.DecisionAllow, reason, err
	case authorizer.DecisionDeny:
		return kubeauthz.DecisionDeny, reason, err
	}
	return kubeauthz.DecisionNoOpinion, reason, err
}

// resourceOf is the request's resource for authorizer.requestResource.
type resourceOf struct{ r *request }

func (x resourceOf) GetName() string      { return x.r.a.Name }
func (x resourceOf) GetNamespace() string { return x.r.a.Namespace }
func (x resourceOf) GetResource() schema.GroupVersionResource {
	return x.r.gvr
}
func (x resourceOf) GetSubresource() string { return x.r.subresource }
