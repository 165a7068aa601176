package crdschema

import (
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// ruleNode is one schema node on the way down a CRD check: the CEL type of
// the node (derived from its parent's when it can be, as converting a large
// schema is expensive) and how many times data of this node may occur in
// an object (the product of the maxItems and maxProperties above it; nil
// when some list or map above is unbounded).
type ruleNode struct {
	checker *ruleChecker
	parent  *ruleNode
	// access derives the node's type from its parent's; nil at the root.
	access func(parent *ruleTypeInfo) *ruleTypeInfo
	props  *apiextv1.JSONSchemaProps
	// inScope is true when this node or one above it has rules: only then
	// is its type needed.
	inScope        bool
	maxCardinality *uint64

	resolved bool
	info     *ruleTypeInfo
	infoErr  error
}

// ruleTypeInfo is what CEL needs to compile the rules of a node.
type ruleTypeInfo struct {
	schema *structuralschema.Structural
	decl   *apiservercel.DeclType
}

func newRootRuleNode(c *ruleChecker, props *apiextv1.JSONSchemaProps) *ruleNode {
	one := uint64(1)
	return &ruleNode{checker: c, props: props, inScope: len(props.XValidations) > 0, maxCardinality: &one}
}

// typeInfo returns the node's CEL type, nil when no rule is in scope.
func (n *ruleNode) typeInfo() (*ruleTypeInfo, error) {
	if n == nil || !n.inScope {
		return nil, nil
	}
	if n.resolved {
		return n.info, n.infoErr
	}
	n.resolved = true
	if n.parent != nil {
		parent, err := n.parent.typeInfo()
		if err != nil {
			n.infoErr = err
			return nil, err
		}
		if parent != nil && n.access != nil {
			if n.info = n.access(parent); n.info != nil {
				return n.info, nil
			}
		}
	}
	n.info, n.infoErr = convertTypeInfo(n.props, n.parent == nil || n.props.XEmbeddedResource)
	return n.info, n.infoErr
}

func convertTypeInfo(props *apiextv1.JSONSchemaProps, isResourceRoot bool) (*ruleTypeInfo, error) {
	st, err := toStructural(props)
	if err != nil {
		return nil, err
	}
	decl := model.SchemaDeclType(st, isResourceRoot)
	if decl == nil {
		return nil, fmt.Errorf("unable to convert structural schema to CEL declarations")
	}
	return &ruleTypeInfo{schema: st, decl: decl}, nil
}

// property, additional and items return the nodes of a child schema (nil
// when n is nil: no rules are compiled below).
func (n *ruleNode) property(props *apiextv1.JSONSchemaProps, name string) *ruleNode {
	return n.child(props, func(parent *ruleTypeInfo) *ruleTypeInfo {
		if parent.schema.Properties == nil {
			return nil
		}
		prop := parent.schema.Properties[name]
		escaped, ok := apiservercel.Escape(name)
		if !ok {
			return nil // an unescapable name is no field of the CEL type
		}
		f, ok := parent.decl.Fields[escaped]
		if !ok {
			return nil // a field of unknown type is left out of the CEL type
		}
		return &ruleTypeInfo{schema: &prop, decl: f.Type}
	})
}

func (n *ruleNode) additional(props *apiextv1.JSONSchemaProps) *ruleNode {
	return n.child(props, func(parent *ruleTypeInfo) *ruleTypeInfo {
		if parent.schema.AdditionalProperties == nil {
			return nil
		}
		return &ruleTypeInfo{schema: parent.schema.AdditionalProperties.Structural, decl: parent.decl.ElemType}
	})
}

func (n *ruleNode) items(props *apiextv1.JSONSchemaProps) *ruleNode {
	return n.child(props, func(parent *ruleTypeInfo) *ruleTypeInfo {
		if parent.schema.Items == nil {
			return nil
		}
		return &ruleTypeInfo{schema: parent.schema.Items, decl: parent.decl.ElemType}
	})
}

func (n *ruleNode) child(props *apiextv1.JSONSchemaProps, access func(*ruleTypeInfo) *ruleTypeInfo) *ruleNode {
	if n == nil {
		return nil
	}
	c := &ruleNode{checker: n.checker, parent: n, access: access, props: props, inScope: n.inScope}
	if props != nil && len(props.XValidations) > 0 {
		c.inScope = true
	}
	if n.maxCardinality == nil {
		return c
	}
	if factor := maxElements(n.props); factor != nil {
		v := timesCardinality(*n.maxCardinality, *factor)
		c.maxCardinality = &v
	}
	return c
}

// maxElements is how many children a node may have per occurrence: 1 for
// an object with properties (and for scalars), maxProperties for a map,
// maxItems for a list; nil when unbounded.
func maxElements(s *apiextv1.JSONSchemaProps) *uint64 {
	limit := func(v *int64) *uint64 {
		if v == nil {
			return nil
		}
		n := uint64(0)
		if *v > 0 {
			n = uint64(*v)
		}
		return &n
	}
	one := uint64(1)
	switch s.Type {
	case "object":
		if s.AdditionalProperties != nil {
			return limit(s.MaxProperties)
		}
		return &one
	case "array":
		return limit(s.MaxItems)
	default:
		return &one
	}
}
