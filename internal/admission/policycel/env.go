package policycel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"
)

// compatibility is kube-apiserver v1.37's CEL compatibility version.
var compatibility = version.MajorMinor(1, 36)

// Vars selects the optional variables of an expression's environment, as
// kube-apiserver's OptionalVariableDeclarations.
type Vars struct {
	Params, Authorizer, PatchTypes bool
}

// Result types of the expression fields.
var (
	BoolResult       = []*cel.Type{cel.BoolType}
	StringResult     = []*cel.Type{cel.StringType}
	AnnotationResult = []*cel.Type{cel.StringType, cel.NullType}
	AnyResult        = []*cel.Type{cel.AnyType, cel.DynType}
	ApplyResult      = []*cel.Type{cel.ObjectType("Object")}
	JSONPatchResult  = []*cel.Type{cel.ListType(cel.ObjectType("JSONPatch"))}
)

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
	base      *environment.EnvSet
	variables *apiservercel.DeclType
	envs      map[Vars]*environment.EnvSet
	// Variables are the compiled variables by name, in the order compiled.
	Variables     map[string]*Compiled
	variableOrder []string
}

// NewCompiler returns a compiler for one policy.
func NewCompiler() (*Compiler, error) {
	vars := apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
	base, err := environment.MustBaseEnvSet(compatibility).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []cel.EnvOption{cel.Variable("variables", vars.CelType())},
		DeclTypes:         []*apiservercel.DeclType{vars},
	})
	if err != nil {
		return nil, fmt.Errorf("cel: variables environment: %w", err)
	}
	return &Compiler{base: base, variables: vars, envs: map[Vars]*environment.EnvSet{}, Variables: map[string]*Compiled{}}, nil
}

func (c *Compiler) env(v Vars) (*environment.EnvSet, error) {
	if e, ok := c.envs[v]; ok {
		return e, nil
	}
	request, namespace := RequestDeclType(), NamespaceDeclType()
	opts := []cel.EnvOption{
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("namespaceObject", namespace.CelType()),
		cel.Variable("request", request.CelType()),
	}
	if v.Params {
		opts = append(opts, cel.Variable("params", cel.DynType))
	}
	if v.Authorizer {
		opts = append(opts, cel.Variable("authorizer", library.AuthorizerType),
			cel.Variable("authorizer.requestResource", library.ResourceCheckType))
	}
	e, err := c.base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         []*apiservercel.DeclType{namespace, request},
	}, environment.StrictCostOpt)
	if err == nil && v.PatchTypes {
		e, err = e.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
				environment.UnversionedLib(library.JSONPatch),
			},
		})
	}
	if err != nil {
		return nil, fmt.Errorf("environment misconfigured: %w", err)
	}
	c.envs[v] = e
	return e, nil
}

// Compile compiles expr in the environment v selects (stored expressions,
// as kube-apiserver compiles what it enforces) and checks its type is one
// of want.
func (c *Compiler) Compile(expr string, v Vars, want []*cel.Type) *Compiled {
	out := &Compiled{Expression: expr}
	set, err := c.env(v)
	if err != nil {
		out.Err = err
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
	if !typeOK(ast.OutputType(), want) {
		if len(want) == 1 {
			out.Err = fmt.Errorf("must evaluate to %v but got %v", want[0].String(), ast.OutputType().String())
		} else {
			out.Err = fmt.Errorf("must evaluate to one of %v but got %v", want, ast.OutputType().String())
		}
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

func typeOK(got *cel.Type, want []*cel.Type) bool {
	for _, t := range want {
		if got.IsExactType(t) || cel.AnyType.IsExactType(t) {
			return true
		}
	}
	return false
}

// AddVariable compiles a variable (with params as v says and the
// authorizer) and declares variables.<name> with its type for the
// expressions compiled after it.
func (c *Compiler) AddVariable(name, expr string, v Vars) *Compiled {
	v.Authorizer = true
	r := c.Compile(expr, v, AnyResult)
	c.variables.Fields[name] = apiservercel.NewDeclField(name, DeclType(r.OutputType), true, nil, nil)
	c.Variables[name] = r
	c.variableOrder = append(c.variableOrder, name)
	return r
}

// DeclType converts a CEL type to the declared type of a variables field.
func DeclType(t *cel.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	switch t {
	case cel.AnyType:
		return apiservercel.AnyType
	case cel.BoolType:
		return apiservercel.BoolType
	case cel.BytesType:
		return apiservercel.BytesType
	case cel.DoubleType:
		return apiservercel.DoubleType
	case cel.DurationType:
		return apiservercel.DurationType
	case cel.IntType:
		return apiservercel.IntType
	case cel.NullType:
		return apiservercel.NullType
	case cel.StringType:
		return apiservercel.StringType
	case cel.TimestampType:
		return apiservercel.TimestampType
	case cel.UintType:
		return apiservercel.UintType
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		switch ps := t.Parameters(); len(ps) {
		case 1:
			return apiservercel.NewListType(DeclType(ps[0]), -1)
		case 2:
			return apiservercel.NewMapType(DeclType(ps[0]), DeclType(ps[1]), -1)
		}
	}
	return apiservercel.DynType
}
