package policycel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Vars selects the optional variables of an expression's environment.
type Vars = admissioncel.Vars

// Compiled is one compiled expression: Program, or Err (worded as
// kube-apiserver's compilation errors).
type Compiled struct {
	Expression string
	Program    cel.Program
	OutputType *cel.Type
	Err        error
}

// Compiler compiles the expressions of one policy. Its environment
// declares `variables` whose fields are added as the policy's variables are
// compiled (AddVariable). Not safe for concurrent use while compiling; the
// Compiled results and the variables are safe to evaluate concurrently.
type Compiler struct {
	envs *admissioncel.Envs
	// Variables are the compiled variables by name, in the order compiled.
	Variables     map[string]*Compiled
	variableOrder []string
}

// NewCompiler returns a compiler for one policy.
func NewCompiler() (*Compiler, error) {
	envs, err := admissioncel.NewEnvs(true)
	if err != nil {
		return nil, err
	}
	return &Compiler{envs: envs, Variables: map[string]*Compiled{}}, nil
}

// Compile compiles expr in the environment v selects (stored expressions,
// as kube-apiserver compiles what it enforces) and checks its type is one
// of want.
func (c *Compiler) Compile(expr string, v Vars, want []*cel.Type) *Compiled {
	out := &Compiled{Expression: expr}
	set, err := c.envs.Env(v)
	if err != nil {
		out.Err = fmt.Errorf("environment misconfigured: %w", err)
		return out
	}
	env, err := set.Env(environment.StoredExpressions)
	if err != nil {
		out.Err = fmt.Errorf("unexpected error loading CEL environment: %v", err)
		return out
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		out.Err = fmt.Errorf("compilation failed: %s", issues.String())
		return out
	}
	if err := admissioncel.CheckType(ast.OutputType(), want); err != nil {
		out.Err = err
		return out
	}
	prog, err := env.Program(ast, cel.InterruptCheckFrequency(100))
	if err != nil {
		out.Err = fmt.Errorf("program instantiation failed: %v", err)
		return out
	}
	out.Program, out.OutputType = prog, ast.OutputType()
	return out
}

// AddVariable compiles a variable (with params as v says and the
// authorizer) and declares variables.<name> with its type for the
// expressions compiled after it.
func (c *Compiler) AddVariable(name, expr string, v Vars) *Compiled {
	v.Authorizer = true
	r := c.Compile(expr, v, admissioncel.AnyResult)
	c.envs.DeclareVariable(name, r.OutputType)
	c.Variables[name] = r
	c.variableOrder = append(c.variableOrder, name)
	return r
}
