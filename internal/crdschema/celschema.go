package crdschema

import (
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// celSchema is one node of a structural schema as Kubernetes' CEL value
// adapters read it (common.Schema), with the children resolved once per
// node and kept: apiextensions-apiserver's model.Structural builds a new
// map of every property's schema on each Properties call, which the value
// adapters make on every field access of every evaluation.
//
// The scalar getters are model.Structural's own, so every answer is the
// one Kubernetes' adapter gives; only the allocation is saved. A celSchema
// belongs to one compiled Schema and so is dropped with it when the CRD
// changes. Children are resolved on first use (a schema of thousands of
// nodes pays only for the nodes rules reach) and safe for concurrent use.
type celSchema struct {
	model.Structural

	propsOnce sync.Once
	props     map[string]common.Schema

	itemsOnce sync.Once
	items     common.Schema

	additionalOnce sync.Once
	additional     common.SchemaOrBool

	metaOnce sync.Once
	meta     common.Schema

	shapeOnce sync.Once
	shapeVal  *celShape
}

var (
	_ common.Schema       = (*celSchema)(nil)
	_ common.SchemaOrBool = (*celSchemaOrBool)(nil)
)

// newCelSchema adapts s; nil for a nil s.
func newCelSchema(s *structuralschema.Structural) *celSchema {
	if s == nil {
		return nil
	}
	return &celSchema{Structural: model.Structural{Structural: s}}
}

// Properties returns the adapted properties, nil when the schema has none
// (an empty properties map is an empty, non-nil map, as in Kubernetes'
// adapter). The map is shared: callers only read it.
func (s *celSchema) Properties() map[string]common.Schema {
	s.propsOnce.Do(func() {
		if s.Structural.Structural.Properties == nil {
			return
		}
		s.props = make(map[string]common.Schema, len(s.Structural.Structural.Properties))
		for name, prop := range s.Structural.Structural.Properties {
			s.props[name] = newCelSchema(&prop)
		}
	})
	return s.props
}

// Items returns the adapted items schema, or nil.
func (s *celSchema) Items() common.Schema {
	s.itemsOnce.Do(func() {
		if items := s.Structural.Structural.Items; items != nil {
			s.items = newCelSchema(items)
		}
	})
	return s.items
}

// AdditionalProperties returns the adapted additionalProperties, or nil.
func (s *celSchema) AdditionalProperties() common.SchemaOrBool {
	s.additionalOnce.Do(func() {
		ap := s.Structural.Structural.AdditionalProperties
		if ap == nil {
			return
		}
		out := &celSchemaOrBool{allows: ap.Bool}
		if ap.Structural != nil {
			out.schema = newCelSchema(ap.Structural)
		}
		s.additional = out
	})
	return s.additional
}

// WithTypeAndObjectMeta returns the schema with apiVersion, kind and
// metadata.name/generateName added, as the root of a resource (and an
// embedded resource) shows them to rules; built once.
func (s *celSchema) WithTypeAndObjectMeta() common.Schema {
	s.metaOnce.Do(func() {
		s.meta = newCelSchema(model.WithTypeAndObjectMeta(s.Structural.Structural))
	})
	return s.meta
}

// celSchemaOrBool is an adapted additionalProperties.
type celSchemaOrBool struct {
	schema *celSchema
	allows bool
}

// Schema returns the schema of additional values, nil when there is none
// (an interface holding no *celSchema, as callers compare it with nil).
func (b *celSchemaOrBool) Schema() common.Schema {
	if b.schema == nil {
		return nil
	}
	return b.schema
}

func (b *celSchemaOrBool) Allows() bool { return b.allows }
