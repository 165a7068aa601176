package policycel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	kauthorizer "k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/lazy"
	"k8s.io/apiserver/pkg/cel/library"
)

// Runtime cost budgets of kube-apiserver (k8s.io/apiserver/pkg/apis/cel).
const (
	// RuntimeCostBudget is the budget of one binding's evaluation (each
	// list of expressions of it).
	RuntimeCostBudget = 10000000
	// MatchConditionsCostBudget is the budget of a policy's matchConditions.
	MatchConditionsCostBudget = 2500000
)

// ErrOutOfBudget words an evaluation that ran out of its runtime budget.
var ErrOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// Input is what an evaluation sees of one request.
type Input struct {
	// Object and OldObject are the objects as JSON-like maps (nil: null).
	Object, OldObject map[string]any
	// Params is the binding's param as a JSON-like map (nil: null).
	Params map[string]any
	// Request is the admission request (without its objects).
	Request *admissionv1.AdmissionRequest
	// Namespace is the request's namespace (nil for cluster-scoped).
	Namespace *corev1.Namespace
	// User and Authz are the requester and the server's authorizer (nil
	// Authz: no `authorizer`).
	User  user.Info
	Authz kauthorizer.UnconditionalAuthorizer
	// Resource is the request's resource for authorizer.requestResource.
	Resource ResourceRef
}

// ResourceRef is the resource of a request as authorizer.requestResource
// checks it.
type ResourceRef struct {
	GVR             schema.GroupVersionResource
	Subresource     string
	Namespace, Name string
}

func (r ResourceRef) GetName() string                          { return r.Name }
func (r ResourceRef) GetNamespace() string                     { return r.Namespace }
func (r ResourceRef) GetResource() schema.GroupVersionResource { return r.GVR }
func (r ResourceRef) GetSubresource() string                   { return r.Subresource }

// Activation is one evaluation's variables: a run of a list of
// expressions, whose `variables` are evaluated at most once each (lazily),
// their cost charged to the expression that first uses them.
type Activation struct {
	object, oldObject, params, request, namespace ref.Val
	authorizer, resourceAuthorizer                ref.Val
	variables                                     *lazy.MapValue
	variableCost                                  int64
	ctx                                           context.Context
}

// NewActivation prepares the variables of in; with authz the expressions
// may use `authorizer` (only expressions compiled with Vars.Authorizer
// reach it).
func (c *Compiler) NewActivation(ctx context.Context, in *Input, authz bool) *Activation {
	a := &Activation{ctx: ctx}
	a.object = mapVal(in.Object)
	a.oldObject = mapVal(in.OldObject)
	a.params = mapVal(in.Params)
	a.request = common.SchemalessTypedToVal(in.Request)
	if in.Namespace != nil {
		a.namespace = common.SchemalessTypedToVal(in.Namespace)
	} else {
		a.namespace = types.NullValue
	}
	if authz && in.Authz != nil {
		a.authorizer = library.NewAuthorizerVal(in.User, in.Authz)
		a.resourceAuthorizer = library.NewResourceAuthorizerVal(in.User, in.Authz, in.Resource)
	}
	a.variables = lazy.NewMapValue(c.envs.VariablesType())
	for _, name := range c.variableOrder {
		compiled := c.Variables[name]
		a.variables.Append(name, func(*lazy.MapValue) ref.Val { return a.variable(name, compiled) })
	}
	return a
}

func mapVal(m map[string]any) ref.Val {
	if m == nil {
		return types.NullValue
	}
	return types.DefaultTypeAdapter.NativeToValue(m)
}

// variable evaluates one variable for the lazy map, as kube-apiserver's
// composition does.
func (a *Activation) variable(name string, c *Compiled) ref.Val {
	if c.Err != nil {
		return types.NewErr("composited variable %q fails to compile: %v", name, c.Err)
	}
	v, details, err := c.Program.ContextEval(a.ctx, a)
	if details == nil {
		return types.NewErr("unable to get evaluation details of variable %q", name)
	}
	cost := details.ActualCost()
	if cost == nil {
		return types.NewErr("unable to calculate cost of variable %q", name)
	}
	if *cost > math.MaxInt64 {
		a.variableCost = math.MaxInt64
	} else {
		a.variableCost += int64(*cost)
	}
	if err != nil {
		return types.NewErr("composited variable %q fails to evaluate: %v", name, err)
	}
	return v
}

// ResolveName implements interpreter.Activation.
func (a *Activation) ResolveName(name string) (any, bool) {
	switch name {
	case "object":
		return a.object, true
	case "oldObject":
		return a.oldObject, true
	case "params":
		return a.params, true
	case "request":
		return a.request, true
	case "namespaceObject":
		return a.namespace, true
	case "authorizer":
		return a.authorizer, a.authorizer != nil
	case "authorizer.requestResource":
		return a.resourceAuthorizer, a.resourceAuthorizer != nil
	case "variables":
		return a.variables, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *Activation) Parent() interpreter.Activation { return nil }

// Result is one expression's outcome: Value, or Err (the expression's
// error, worded as kube-apiserver's).
type Result struct {
	Value ref.Val
	Err   error
}

// Eval runs c within budget and returns its result and the budget left.
// An error (ErrOutOfBudget, or the cost could not be measured) ends the
// list the expression belongs to, as in kube-apiserver.
func (a *Activation) Eval(c *Compiled, budget int64) (Result, int64, error) {
	if c.Err != nil {
		return Result{Err: fmt.Errorf("compilation error: %v", c.Err)}, budget, nil
	}
	v, details, err := c.Program.ContextEval(a.ctx, a)
	vc := a.variableCost
	a.variableCost = 0
	if vc > budget {
		return Result{}, -1, ErrOutOfBudget
	}
	budget -= vc
	if details == nil || details.ActualCost() == nil {
		return Result{}, -1, fmt.Errorf("runtime cost could not be calculated for expression: %v, no further expression will be run", c.Expression)
	}
	if cost := *details.ActualCost(); cost > math.MaxInt64 || int64(cost) > budget {
		return Result{}, -1, ErrOutOfBudget
	} else {
		budget -= int64(cost)
	}
	if err != nil {
		return Result{Err: fmt.Errorf("expression '%v' resulted in error: %v", c.Expression, err)}, budget, nil
	}
	return Result{Value: v}, budget, nil
}

// EvalAll runs the list exprs in one activation within budget.
func (a *Activation) EvalAll(exprs []*Compiled, budget int64) ([]Result, int64, error) {
	out := make([]Result, len(exprs))
	for i, c := range exprs {
		var err error
		out[i], budget, err = a.Eval(c, budget)
		if err != nil {
			return nil, -1, err
		}
	}
	return out, budget, nil
}
