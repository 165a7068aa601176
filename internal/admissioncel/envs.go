package admissioncel

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"
)

// Compatibility is kube-apiserver v1.37's CEL compatibility version: the
// version of the CEL libraries new expressions may use.
var Compatibility = version.MajorMinor(1, 36)

// Vars selects the optional variables of an expression's environment, as
// kube-apiserver's OptionalVariableDeclarations.
type Vars struct {
	Params, Authorizer, PatchTypes bool
}

// Envs builds the environments of one object's expressions (a webhook
// configuration, a policy), one per Vars, sharing the `variables` type
// when composition is on.
type Envs struct {
	base      *environment.EnvSet
	variables *apiservercel.DeclType // nil without composition
	envs      map[Vars]*environment.EnvSet
}

// NewEnvs returns the environments of one object; with composition they
// declare `variables`.
func NewEnvs(composition bool) (*Envs, error) {
	e := &Envs{base: environment.MustBaseEnvSet(Compatibility), envs: map[Vars]*environment.EnvSet{}}
	if composition {
		e.variables = apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
		base, err := e.base.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("variables", e.variables.CelType())},
			DeclTypes:         []*apiservercel.DeclType{e.variables},
		})
		if err != nil {
			return nil, fmt.Errorf("cel: variables environment: %w", err)
		}
		e.base = base
	}
	return e, nil
}

// Env returns the environment with the variables v selects.
func (e *Envs) Env(v Vars) (*environment.EnvSet, error) {
	if s, ok := e.envs[v]; ok {
		return s, nil
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
	s, err := e.base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         []*apiservercel.DeclType{namespace, request},
	}, environment.StrictCostOpt)
	if err == nil && v.PatchTypes {
		s, err = s.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
				environment.UnversionedLib(library.JSONPatch),
			},
		})
	}
	if err != nil {
		return nil, err
	}
	e.envs[v] = s
	return s, nil
}

// DeclareVariable declares variables.<name> with type t (dynamic when nil:
// an expression that did not compile) for the expressions compiled after
// it; nothing without composition.
func (e *Envs) DeclareVariable(name string, t *cel.Type) {
	if e.variables != nil {
		e.variables.Fields[name] = apiservercel.NewDeclField(name, DeclType(t), true, nil, nil)
	}
}

// VariablesType is the CEL type of `variables` (nil without composition),
// for the activation that evaluates them.
func (e *Envs) VariablesType() *cel.Type {
	if e.variables == nil {
		return nil
	}
	return e.variables.CelType()
}
