package admissioncel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// MatchConditionProgram compiles a webhook's match condition for
// evaluation, in the environment its write was checked in (object,
// oldObject, request, namespaceObject, authorizer,
// authorizer.requestResource), with kube-apiserver's runtime cost budget
// for match conditions. It is how the admission webhook plugins
// (internal/admission/webhook) evaluate matchConditions.
func MatchConditionProgram(expr string) (cel.Program, error) {
	envs, err := NewEnvs(false)
	if err != nil {
		return nil, err
	}
	set, err := envs.Env(Vars{Authorizer: true})
	if err != nil {
		return nil, fmt.Errorf("cel: environment: %w", err)
	}
	env, err := set.Env(environment.StoredExpressions)
	if err != nil {
		return nil, fmt.Errorf("cel: environment: %w", err)
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		return nil, fmt.Errorf("compilation failed: %s", issues.String())
	}
	if !ast.OutputType().IsExactType(cel.BoolType) && !ast.OutputType().IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must evaluate to bool but got %v", ast.OutputType())
	}
	return env.Program(ast, cel.CostLimit(celconfig.RuntimeCELCostBudgetMatchConditions),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency), cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost))
}
