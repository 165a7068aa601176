package openapi

import (
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Facts of the built-in models that Kubernetes derives from comments on
// its Go types, not from their structure (+enum, +listType, +listMapKey,
// +mapType/+structType, +required/+optional, +union, +default and the
// zero-value defaults openapi-gen writes for required fields), so that
// reflection cannot find them. zz_generated_facts.go holds them, generated
// by compat/cmd/openapifacts from kube-apiserver's own documents (values
// only, no prose); the compat suite fails when that file is stale.
//
// For a model with facts, they replace what reflection guessed: the
// required list, the model's map type and unions, and per property the
// enum values (of the property, its items or its map values), list type,
// list map keys, map type and (OpenAPI v3 only) default. Patch strategy
// and merge key stay those of the struct tags.

// modelFacts are one model's facts; props holds the properties that have
// any.
type modelFacts struct {
	required []string
	mapType  string
	// unions is the x-kubernetes-unions value as JSON text.
	unions string
	// gvks is the x-kubernetes-group-version-kind list of the Swagger 2.0
	// document, for the apimachinery meta kinds (DeleteOptions and
	// WatchEvent list every group-version of kube-apiserver's scheme).
	gvks  []schema.GroupVersionKind
	props map[string]*propFacts
}

type propFacts struct {
	enum, itemEnum, valueEnum []string
	listType                  string
	listMapKeys               []string
	mapType                   string
	// def is the default as JSON text, "" for none.
	def string
}

// Extension names only facts set.
const (
	extMapType = "x-kubernetes-map-type"
	extUnions  = "x-kubernetes-unions"
)

// applyFacts replaces the guessed facts of a struct model's schema with
// the generated ones, if the model has any.
func (g *generator) applyFacts(name string, s *spec.Schema) {
	f, ok := generatedFacts[name]
	if !ok {
		return
	}
	s.Required = slices.Clone(f.required)
	setExt(s, extMapType, f.mapType)
	delete(s.Extensions, extUnions)
	if f.unions != "" {
		var u any
		if err := json.Unmarshal([]byte(f.unions), &u); err == nil {
			s.AddExtension(extUnions, u)
		}
	}
	for pname, prop := range s.Properties {
		pf := f.props[pname]
		if pf == nil {
			pf = &propFacts{}
		}
		g.applyPropFacts(&prop, pf)
		s.Properties[pname] = prop
	}
}

func (g *generator) applyPropFacts(s *spec.Schema, f *propFacts) {
	s.Enum = anyList(f.enum)
	if s.Items != nil && s.Items.Schema != nil && s.Items.Schema.Ref.String() == "" {
		s.Items.Schema.Enum = anyList(f.itemEnum)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && s.AdditionalProperties.Schema.Ref.String() == "" {
		s.AdditionalProperties.Schema.Enum = anyList(f.valueEnum)
	}
	setExt(s, extListType, f.listType)
	delete(s.Extensions, extListMapKeys)
	if len(f.listMapKeys) > 0 {
		s.AddExtension(extListMapKeys, anyList(f.listMapKeys))
	}
	setExt(s, extMapType, f.mapType)
	s.Default = nil
	if f.def != "" && g.dialect == openapi3 {
		var d any
		if err := json.Unmarshal([]byte(f.def), &d); err == nil {
			s.Default = d
		}
	}
}

// setExt sets a string extension, or removes it when v is "".
func setExt(s *spec.Schema, name, v string) {
	delete(s.Extensions, name)
	if v != "" {
		s.AddExtension(name, v)
	}
}

func anyList(ss []string) []any {
	if len(ss) == 0 {
		return nil
	}
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}

// unwrapBareRefs turns, in OpenAPI v3, each property that is a one-element
// allOf with nothing beside it back into a bare $ref: Kubernetes wraps a
// reference only to give it siblings (description, default, extensions).
func unwrapBareRefs(s *spec.Schema) {
	for name, p := range s.Properties {
		if len(p.AllOf) != 1 || p.AllOf[0].Ref.String() == "" {
			continue
		}
		bare := p
		bare.AllOf = nil
		if bare.Description == "" && bare.Default == nil && len(bare.Extensions) == 0 && isEmptySchema(bare) {
			s.Properties[name] = p.AllOf[0]
		}
	}
}

// isEmptySchema reports whether s says nothing (after its allOf, default,
// description and extensions were taken out).
func isEmptySchema(s spec.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "{}"
}
