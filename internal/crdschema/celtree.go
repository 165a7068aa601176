package crdschema

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// This file builds the tree of compiled x-kubernetes-validations rules of a
// schema: Kubernetes' own compilation (cel.Compile, in the environment of
// stored expressions, with the per-call cost limit), one node per schema
// node that has rules or has some below it, so that evaluation never walks
// a part of an object no rule can see. The tree has the shape of
// apiextensions-apiserver's cel.Validator; the difference is that each node
// carries a celSchema, whose children are resolved once.

// ruleTree is the compiled rules of one schema node and the subtrees below
// it that have rules.
type ruleTree struct {
	// schema is the node's schema as the value adapters read it; self is
	// the schema rules see it with: schema, with apiVersion, kind and
	// metadata added at the root of a resource.
	schema, self *celSchema
	// typ is the node's type, the value of the errors about the node.
	typ string
	// mapType is the node's x-kubernetes-map-type (nil when unset).
	mapType *string

	rules      apiextv1.ValidationRules
	compiled   []cel.CompilationResult
	compileErr error
	// usesOldSelf is set when some rule of the node uses oldSelf: only
	// then is the old value adapted.
	usesOldSelf bool

	items      *ruleTree
	additional *ruleTree
	properties map[string]*ruleTree
	allOf      []*ruleTree
}

// newRuleTree compiles the rules of the whole schema st (the root of a
// custom resource; adapted is its adapter); nil when it has none.
func newRuleTree(st *structuralschema.Structural, adapted *celSchema, perCallLimit uint64) *ruleTree {
	if !hasRules(st) {
		return nil
	}
	b := ruleTreeBuilder{
		envSet:       environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()),
		perCallLimit: perCallLimit,
	}
	return b.build(st, st, adapted, true, model.SchemaDeclType(st, true))
}

type ruleTreeBuilder struct {
	envSet       *environment.EnvSet
	perCallLimit uint64
}

// build compiles the rules of validation (the node's schema, or one of its
// allOf schemas) against node, whose data they see; nil when neither it nor
// anything below it has rules. adapted is node as the value adapters read
// it, decl its CEL type.
func (b ruleTreeBuilder) build(validation, node *structuralschema.Structural, adapted *celSchema, resourceRoot bool, decl *apiservercel.DeclType) *ruleTree {
	compilation := *node
	compilation.XValidations = validation.XValidations
	compiled, err := cel.Compile(&compilation, decl, b.perCallLimit, b.envSet, cel.StoredExpressionsEnvLoader())

	t := &ruleTree{
		schema:     adapted,
		self:       adapted,
		typ:        node.Type,
		mapType:    node.XMapType,
		rules:      validation.XValidations,
		compiled:   compiled,
		compileErr: err,
	}
	if resourceRoot {
		t.self = adapted.WithTypeAndObjectMeta().(*celSchema)
	}
	for _, c := range compiled {
		t.usesOldSelf = t.usesOldSelf || c.UsesOldSelf
	}
	var elem *apiservercel.DeclType
	if decl != nil {
		elem = decl.ElemType
	}
	if validation.Items != nil && node.Items != nil {
		t.items = b.build(validation.Items, node.Items, adapted.Items().(*celSchema), node.Items.XEmbeddedResource, elem)
	}
	t.properties = b.buildProperties(validation, node, adapted, decl)
	if va, na := validation.AdditionalProperties, node.AdditionalProperties; va != nil && va.Structural != nil && na != nil && na.Structural != nil {
		adaptedAdditional := adapted.AdditionalProperties().Schema().(*celSchema)
		t.additional = b.build(va.Structural, na.Structural, adaptedAdditional, na.Structural.XEmbeddedResource, elem)
	}
	if validation.ValueValidation != nil {
		for i := range validation.ValueValidation.AllOf {
			if sub := b.build(nestedStructural(&validation.ValueValidation.AllOf[i]), node, adapted, resourceRoot, decl); sub != nil {
				t.allOf = append(t.allOf, sub)
			}
		}
	}
	if len(compiled) == 0 && err == nil && t.items == nil && t.additional == nil && len(t.properties) == 0 && len(t.allOf) == 0 {
		return nil
	}
	return t
}

// buildProperties builds the subtrees of the properties of validation that
// node has and whose type CEL knows: a property whose name CEL can escape
// takes its type from the node's; one it cannot is typed on its own.
func (b ruleTreeBuilder) buildProperties(validation, node *structuralschema.Structural, adapted *celSchema, decl *apiservercel.DeclType) map[string]*ruleTree {
	if len(validation.Properties) == 0 {
		return nil
	}
	out := map[string]*ruleTree{}
	for name, vprop := range validation.Properties {
		nprop, ok := node.Properties[name]
		if !ok {
			continue
		}
		var propDecl *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(name); ok {
			if decl == nil {
				continue
			}
			f, ok := decl.Fields[escaped]
			if !ok {
				continue
			}
			propDecl = f.Type
		} else if propDecl = model.SchemaDeclType(&nprop, nprop.XEmbeddedResource); propDecl == nil {
			continue
		}
		adaptedProp := adapted.Properties()[name].(*celSchema)
		if sub := b.build(&vprop, &nprop, adaptedProp, nprop.XEmbeddedResource, propDecl); sub != nil {
			out[name] = sub
		}
	}
	return out
}

// hasRules reports whether s or a schema below it (properties, items,
// additionalProperties) has rules.
func hasRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 || hasRules(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, prop := range s.Properties {
		if hasRules(&prop) {
			return true
		}
	}
	return false
}

// nestedStructural is an allOf schema in structural form, so that its
// rules compile like a node's.
func nestedStructural(n *structuralschema.NestedValueValidation) *structuralschema.Structural {
	if n == nil {
		return nil
	}
	out := &structuralschema.Structural{
		ValueValidation:      &n.ValueValidation,
		ValidationExtensions: n.ValidationExtensions,
		Generic:              n.ForbiddenGenerics,
		Extensions:           n.ForbiddenExtensions,
		Items:                nestedStructural(n.Items),
	}
	if len(n.Properties) > 0 {
		out.Properties = make(map[string]structuralschema.Structural, len(n.Properties))
		for name, prop := range n.Properties {
			out.Properties[name] = *nestedStructural(&prop)
		}
	}
	if n.AdditionalProperties != nil {
		out.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: nestedStructural(n.AdditionalProperties)}
	}
	return out
}
