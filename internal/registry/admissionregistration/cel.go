package admissionregistration

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The CEL expressions of webhooks' match conditions and of policies are
// compiled and type-checked on every write, as kube-apiserver does: an
// expression that does not compile, or whose type is not the one its field
// needs, is refused with the compiler's message. The environments are
// those of kube-apiserver's admission plugins: object, oldObject (dynamic),
// request (the typed admission request), namespaceObject (a typed
// namespace), params (dynamic, with a paramKind), authorizer, and
// variables (with composition), over Kubernetes' CEL libraries at the
// compatibility version of v1.37 (1.36).

// celCompiler compiles expressions in the environments of one object's
// validation (admissioncel.Envs). Not safe for concurrent use: make one
// per validation.
type celCompiler struct {
	envs *admissioncel.Envs
}

func newCELCompiler(composition bool) (*celCompiler, error) {
	envs, err := admissioncel.NewEnvs(composition)
	if err != nil {
		return nil, err
	}
	return &celCompiler{envs: envs}, nil
}

// compile checks expr, stored telling whether the object already had it
// (an expression kept across an update may use newer libraries), and
// returns its type, or the field error kube-apiserver gives at p.
func (c *celCompiler) compile(p *field.Path, expr string, v admissioncel.Vars, stored bool, want []*cel.Type) (*cel.Type, *field.Error) {
	set, err := c.envs.Env(v)
	if err != nil {
		return nil, field.InternalError(p, fmt.Errorf("cel: environment: %w", err))
	}
	mode := environment.NewExpressions
	if stored {
		mode = environment.StoredExpressions
	}
	env, err := set.Env(mode)
	if err != nil {
		return nil, field.InternalError(p, fmt.Errorf("unexpected error loading CEL environment: %w", err))
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		return nil, field.Invalid(p, expr, "compilation failed: "+issues.String())
	}
	if err := admissioncel.CheckType(ast.OutputType(), want); err != nil {
		return nil, field.Invalid(p, expr, err.Error())
	}
	return ast.OutputType(), nil
}

// addVariable declares variables.<name> with the type of its expression
// (dynamic when it did not compile).
func (c *celCompiler) addVariable(name string, t *cel.Type) {
	c.envs.DeclareVariable(name, t)
}
