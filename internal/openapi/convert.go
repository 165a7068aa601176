package openapi

import (
	"fmt"
	"reflect"
	"slices"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// customSchema returns a copy of a custom resource's published schema in
// dialect d, and the names of the models it refers to. The input is never
// modified; maps and slices of the copy that the conversion changes are
// new, others (enum values, extensions) are shared.
//
// In OpenAPI v3 the schema is kept as it is, with its references
// rewritten to "#/components/schemas/" and without keys that are no
// OpenAPI (kube-openapi's ExtraProps). Swagger 2.0 cannot express
// everything OpenAPI v3 can, and kubectl's v2 parser (client-side
// validation, explain) trips over the rest, so the v2 copy is reduced as
// Kubernetes reduces it:
//   - a one-element allOf holding only a $ref becomes that $ref; other
//     allOf, oneOf, anyOf and not are dropped;
//   - nullable is dropped together with the type, properties and items
//     of the nullable schema, and nullable properties are not required;
//   - a schema with x-kubernetes-preserve-unknown-fields loses its
//     properties and items, and its type when that is object; an array
//     left without items loses its type;
//   - defaults and the v3-only keywords (id, $schema, definitions,
//     patternProperties, dependencies, additionalItems) are dropped;
//   - a kind whose root preserves unknown fields is published as a bare
//     object (kubectl would reject the fields the schema does not list).
func customSchema(s *spec.Schema, d dialect) (spec.Schema, []string, error) {
	if s == nil {
		return spec.Schema{}, nil, fmt.Errorf("no schema")
	}
	c := &converter{dialect: d}
	if d == swagger2 && preservesUnknown(s) {
		return typed("object", ""), nil, nil
	}
	out := c.convert(*s, "")
	return out, c.refs, c.err
}

// converter copies one schema tree. Invariant: refs lists every model
// name referred to so far, in order of appearance; err is the first
// failure, with its path in the tree.
type converter struct {
	dialect dialect
	refs    []string
	err     error
}

func preservesUnknown(s *spec.Schema) bool {
	v, ok := s.Extensions.GetBool(extPreserveFields)
	return ok && v
}

func (c *converter) convert(s spec.Schema, path string) spec.Schema {
	out := s
	// Keys kube-openapi does not model are no OpenAPI and would fail
	// gnostic's parsing of the documents.
	out.ExtraProps = nil
	if c.dialect == swagger2 {
		reduceForV2(&out, &s)
	}
	if ref := out.Ref.String(); ref != "" {
		name, err := modelOfRef(ref)
		if err != nil {
			if c.err == nil {
				c.err = fmt.Errorf("%s: %w", pathOrRoot(path), err)
			}
		} else {
			out.Ref = c.dialect.ref(name)
			c.refs = append(c.refs, name)
		}
	}
	out.Properties = c.convertMap(out.Properties, path+".properties")
	out.PatternProperties = c.convertMap(out.PatternProperties, path+".patternProperties")
	out.Definitions = c.convertMap(out.Definitions, path+".definitions")
	out.AllOf = c.convertSlice(out.AllOf, path+".allOf")
	out.OneOf = c.convertSlice(out.OneOf, path+".oneOf")
	out.AnyOf = c.convertSlice(out.AnyOf, path+".anyOf")
	out.Not = c.convertPtr(out.Not, path+".not")
	out.AdditionalProperties = c.convertSchemaOrBool(out.AdditionalProperties, path+".additionalProperties")
	out.AdditionalItems = c.convertSchemaOrBool(out.AdditionalItems, path+".additionalItems")
	if out.Items != nil {
		items := &spec.SchemaOrArray{
			Schema:  c.convertPtr(out.Items.Schema, path+".items"),
			Schemas: c.convertSlice(out.Items.Schemas, path+".items"),
		}
		out.Items = items
	}
	if out.Dependencies != nil {
		deps := make(spec.Dependencies, len(out.Dependencies))
		for k, v := range out.Dependencies {
			deps[k] = spec.SchemaOrStringArray{Schema: c.convertPtr(v.Schema, path+".dependencies."+k), Property: v.Property}
		}
		out.Dependencies = deps
	}
	if c.dialect == openapi3 {
		wrapRef(&out)
	}
	return out
}

// wrapRef moves the $ref of an OpenAPI v3 schema that has anything beside
// it into a one-element allOf, as Kubernetes publishes v3 documents: a
// $ref's siblings are ignored by OpenAPI 3.0 readers, so kubectl explain
// would show the referred model's description instead of the property's
// (a custom resource's metadata, whose description is "Standard object's
// metadata").
func wrapRef(s *spec.Schema) {
	if s.Ref.String() == "" || reflect.DeepEqual(*s, spec.Schema{SchemaProps: spec.SchemaProps{Ref: s.Ref}}) {
		return
	}
	ref := spec.Schema{SchemaProps: spec.SchemaProps{Ref: s.Ref}}
	s.Ref = spec.Ref{}
	s.AllOf = append([]spec.Schema{ref}, s.AllOf...)
}

// reduceForV2 removes from out (a shallow copy of in) what Swagger 2.0
// cannot hold; see customSchema.
func reduceForV2(out, in *spec.Schema) {
	if out.Ref.String() == "" && len(in.AllOf) == 1 && isBareRef(&in.AllOf[0]) {
		out.Ref = in.AllOf[0].Ref
	}
	out.AllOf, out.OneOf, out.AnyOf, out.Not = nil, nil, nil, nil
	out.ID, out.Schema, out.Default = "", "", nil
	out.Definitions, out.PatternProperties, out.Dependencies, out.AdditionalItems = nil, nil, nil, nil
	if in.Nullable {
		out.Nullable = false
		out.Type, out.Items, out.Properties = nil, nil, nil
	}
	if preservesUnknown(in) {
		out.Items, out.Properties = nil, nil
		if out.Type.Contains("object") {
			out.Type = nil
		}
	}
	if out.Items == nil && out.Type.Contains("array") {
		out.Type = nil
	}
	if ap := in.AdditionalProperties; ap != nil && ap.Schema != nil && ap.Schema.Nullable {
		out.Required = nil
	}
	for name, p := range in.Properties {
		if p.Nullable && slices.Contains(out.Required, name) {
			out.Required = slices.DeleteFunc(slices.Clone(out.Required), func(r string) bool { return r == name })
		}
	}
}

// isBareRef reports whether s is a $ref and nothing else that matters.
func isBareRef(s *spec.Schema) bool {
	return s.Ref.String() != "" && len(s.Properties) == 0 && len(s.Type) == 0 &&
		len(s.AllOf) == 0 && len(s.OneOf) == 0 && len(s.AnyOf) == 0 && s.Items == nil &&
		s.AdditionalProperties == nil
}

func (c *converter) convertMap(m map[string]spec.Schema, path string) map[string]spec.Schema {
	if m == nil {
		return nil
	}
	out := make(map[string]spec.Schema, len(m))
	for k, v := range m {
		out[k] = c.convert(v, path+"."+k)
	}
	return out
}

func (c *converter) convertSlice(ss []spec.Schema, path string) []spec.Schema {
	if ss == nil {
		return nil
	}
	out := make([]spec.Schema, len(ss))
	for i, v := range ss {
		out[i] = c.convert(v, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}

func (c *converter) convertPtr(s *spec.Schema, path string) *spec.Schema {
	if s == nil {
		return nil
	}
	out := c.convert(*s, path)
	return &out
}

func (c *converter) convertSchemaOrBool(s *spec.SchemaOrBool, path string) *spec.SchemaOrBool {
	if s == nil {
		return nil
	}
	return &spec.SchemaOrBool{Allows: s.Allows, Schema: c.convertPtr(s.Schema, path)}
}

func pathOrRoot(path string) string {
	if path == "" {
		return "<root>"
	}
	return path[1:]
}
