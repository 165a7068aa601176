package admissionregistration

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"
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

// celCompatibility is kube-apiserver v1.37's minimum compatibility version,
// the version of the CEL libraries new expressions may use.
var celCompatibility = version.MajorMinor(1, 36)

// celVars selects the optional variables of an environment.
type celVars struct {
	params, authorizer, patchTypes bool
}

// celCompiler compiles expressions in the environments of one object's
// validation. With composition it also declares `variables`, whose fields
// are added as the object's variables are compiled. Not safe for
// concurrent use: make one per validation.
type celCompiler struct {
	base      *environment.EnvSet
	variables *apiservercel.DeclType // nil without composition
	envs      map[celVars]*environment.EnvSet
}

func newCELCompiler(composition bool) (*celCompiler, error) {
	c := &celCompiler{base: environment.MustBaseEnvSet(celCompatibility), envs: map[celVars]*environment.EnvSet{}}
	if composition {
		c.variables = apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
		env, err := c.base.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("variables", c.variables.CelType())},
			DeclTypes:         []*apiservercel.DeclType{c.variables},
		})
		if err != nil {
			return nil, fmt.Errorf("cel: variables environment: %w", err)
		}
		c.base = env
	}
	return c, nil
}

// env returns the environment with the variables v selects.
func (c *celCompiler) env(v celVars) (*environment.EnvSet, error) {
	if e, ok := c.envs[v]; ok {
		return e, nil
	}
	request, namespace := requestType(), namespaceType()
	opts := []cel.EnvOption{
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("namespaceObject", namespace.CelType()),
		cel.Variable("request", request.CelType()),
	}
	if v.params {
		opts = append(opts, cel.Variable("params", cel.DynType))
	}
	if v.authorizer {
		opts = append(opts, cel.Variable("authorizer", library.AuthorizerType),
			cel.Variable("authorizer.requestResource", library.ResourceCheckType))
	}
	e, err := c.base.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         []*apiservercel.DeclType{namespace, request},
	}, environment.StrictCostOpt)
	if err == nil && v.patchTypes {
		e, err = e.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []cel.EnvOption{
				common.ResolverEnvOption(&mutation.DynamicTypeResolver{}),
				environment.UnversionedLib(library.JSONPatch),
			},
		})
	}
	if err != nil {
		return nil, fmt.Errorf("cel: environment: %w", err)
	}
	c.envs[v] = e
	return e, nil
}

// Result types of the expression fields.
var (
	boolResult       = []*cel.Type{cel.BoolType}
	stringResult     = []*cel.Type{cel.StringType}
	annotationResult = []*cel.Type{cel.StringType, cel.NullType}
	anyResult        = []*cel.Type{cel.AnyType, cel.DynType}
	applyResult      = []*cel.Type{cel.ObjectType("Object")}
	jsonPatchResult  = []*cel.Type{cel.ListType(cel.ObjectType("JSONPatch"))}
)

// compile checks expr, stored telling whether the object already had it
// (an expression kept across an update may use newer libraries), and
// returns its type, or the field error kube-apiserver gives at p.
func (c *celCompiler) compile(p *field.Path, expr string, v celVars, stored bool, want []*cel.Type) (*cel.Type, *field.Error) {
	set, err := c.env(v)
	if err != nil {
		return nil, field.InternalError(p, err)
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
	out := ast.OutputType()
	for _, t := range want {
		if out.IsExactType(t) || cel.AnyType.IsExactType(t) {
			return out, nil
		}
	}
	if len(want) == 1 {
		return nil, field.Invalid(p, expr, fmt.Sprintf("must evaluate to %v but got %v", want[0].String(), out.String()))
	}
	return nil, field.Invalid(p, expr, fmt.Sprintf("must evaluate to one of %v but got %v", want, out.String()))
}

// addVariable declares variables.<name> with the type of its expression
// (dynamic when it did not compile).
func (c *celCompiler) addVariable(name string, t *cel.Type) {
	if c.variables != nil {
		c.variables.Fields[name] = apiservercel.NewDeclField(name, declType(t), true, nil, nil)
	}
}

// declType converts a CEL type to the declared type of a variables field.
func declType(t *cel.Type) *apiservercel.DeclType {
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
			return apiservercel.NewListType(declType(ps[0]), -1)
		case 2:
			return apiservercel.NewMapType(declType(ps[0]), declType(ps[1]), -1)
		}
	}
	return apiservercel.DynType
}

// requestType is the type of `request`: the fields of an admission request.
func requestType() *apiservercel.DeclType {
	gvk := object("kubernetes.GroupVersionKind", req("group", apiservercel.StringType), req("version", apiservercel.StringType), req("kind", apiservercel.StringType))
	gvr := object("kubernetes.GroupVersionResource", req("group", apiservercel.StringType), req("version", apiservercel.StringType), req("resource", apiservercel.StringType))
	strings := apiservercel.NewListType(apiservercel.StringType, -1)
	user := object("kubernetes.UserInfo", opt("username", apiservercel.StringType), opt("uid", apiservercel.StringType),
		opt("groups", strings), opt("extra", apiservercel.NewMapType(apiservercel.StringType, strings, -1)))
	return object("kubernetes.AdmissionRequest",
		req("kind", gvk), req("resource", gvr), opt("subResource", apiservercel.StringType),
		req("requestKind", gvk), req("requestResource", gvr), opt("requestSubResource", apiservercel.StringType),
		req("name", apiservercel.StringType), opt("namespace", apiservercel.StringType), req("operation", apiservercel.StringType),
		req("userInfo", user), opt("dryRun", apiservercel.BoolType), opt("options", apiservercel.DynType))
}

// namespaceType is the type of `namespaceObject`.
func namespaceType() *apiservercel.DeclType {
	strings := apiservercel.NewListType(apiservercel.StringType, -1)
	labels := apiservercel.NewMapType(apiservercel.StringType, apiservercel.StringType, -1)
	condition := object("kubernetes.NamespaceCondition", req("status", apiservercel.StringType), req("type", apiservercel.StringType),
		req("lastTransitionTime", apiservercel.TimestampType), req("message", apiservercel.StringType), req("reason", apiservercel.StringType))
	meta := object("kubernetes.NamespaceMetadata", req("name", apiservercel.StringType), req("generateName", apiservercel.StringType),
		req("namespace", apiservercel.StringType), req("labels", labels), req("annotations", labels), req("UID", apiservercel.StringType),
		req("creationTimestamp", apiservercel.TimestampType), req("deletionGracePeriodSeconds", apiservercel.IntType),
		req("deletionTimestamp", apiservercel.TimestampType), req("generation", apiservercel.IntType),
		req("resourceVersion", apiservercel.StringType), req("finalizers", strings))
	return object("kubernetes.Namespace", req("metadata", meta),
		req("spec", object("kubernetes.NamespaceSpec", req("finalizers", strings))),
		req("status", object("kubernetes.NamespaceStatus", req("conditions", apiservercel.NewListType(condition, -1)), req("phase", apiservercel.StringType))))
}

func object(name string, fields ...*apiservercel.DeclField) *apiservercel.DeclType {
	m := make(map[string]*apiservercel.DeclField, len(fields))
	for _, f := range fields {
		m[f.Name] = f
	}
	return apiservercel.NewObjectType(name, m)
}

func req(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, true, nil, nil)
}

func opt(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
	return apiservercel.NewDeclField(name, t, false, nil, nil)
}
