package dra

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// selectorCompiler compiles device selectors in the environment
// kube-apiserver v1.37 gives them: one variable, `device`, with the
// device's driver, attributes (domain → name → value of any type),
// capacity (domain → name → quantity) and allowMultipleAllocations
// (DRAConsumableCapacity is on by default; list-typed attributes are
// not), plus cel.bind. Safe for concurrent use; the environment is built
// on first use.
type selectorCompiler struct {
	once sync.Once
	env  *cel.Env
	err  error
	// attribute is the type of one attribute value: an expression of
	// that type is accepted where a bool is expected ("the unknown type").
	attribute *cel.Type
}

func (c *selectorCompiler) init() {
	bounded := func(t *apiservercel.DeclType, n int64) *apiservercel.DeclType {
		out := *t
		out.MaxElements = n
		return &out
	}
	field := func(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
		return apiservercel.NewDeclField(name, t, true, nil, nil)
	}
	domain := bounded(apiservercel.StringType, resourcev1.DeviceMaxDomainLength)
	id := bounded(apiservercel.StringType, resourcev1.DeviceMaxIDLength)
	perDevice := int64(resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)
	attribute := bounded(apiservercel.AnyType, resourcev1.DeviceAttributeMaxValueLength)
	attributes := apiservercel.NewMapType(domain, apiservercel.NewMapType(id, attribute, perDevice), perDevice)
	capacity := apiservercel.NewMapType(domain, apiservercel.NewMapType(id, apiservercel.QuantityDeclType, perDevice), perDevice)
	device := apiservercel.NewObjectType("kubernetes.DRADevice", map[string]*apiservercel.DeclField{
		"allowMultipleAllocations": field("allowMultipleAllocations", bounded(apiservercel.BoolType, 1)),
		"driver":                   field("driver", bounded(apiservercel.StringType, resourcev1.DriverNameMaxLength)),
		"attributes":               field("attributes", attributes),
		"capacity":                 field("capacity", capacity),
	})
	set, err := environment.MustBaseEnvSet(version.MajorMinor(1, 36)).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 31),
		EnvOptions:        []cel.EnvOption{ext.Bindings(ext.BindingsVersion(0)), cel.Variable("device", device.CelType())},
		DeclTypes:         []*apiservercel.DeclType{device},
	})
	if err != nil {
		c.err = fmt.Errorf("dra: selector environment: %w", err)
		return
	}
	c.env, c.err = set.Env(environment.NewExpressions)
	c.attribute = attribute.CelType()
}

// validate checks one selector expression at p: at most 10 KiB, compiles,
// and evaluates to a bool (or an attribute value, whose type is known at
// run time only). The estimated cost is not checked (kube-apiserver also
// refuses expressions whose worst-case cost exceeds 1,000,000).
func (c *selectorCompiler) validate(p *field.Path, expr string) field.ErrorList {
	if len(expr) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(p, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	c.once.Do(c.init)
	if c.err != nil {
		return field.ErrorList{field.InternalError(p, c.err)}
	}
	ast, issues := c.env.Compile(expr)
	if issues != nil {
		return field.ErrorList{field.Invalid(p, expr, "compilation failed: "+issues.String())}
	}
	out := ast.OutputType()
	if out.IsExactType(cel.BoolType) || out.IsExactType(c.attribute) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, expr, fmt.Sprintf("must evaluate to %v or the unknown type, not %v", cel.BoolType.String(), out.String()))}
}
