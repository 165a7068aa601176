package openapi

import (
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// dialect selects the conventions of one OpenAPI version.
type dialect int

const (
	// swagger2 refers to "#/definitions/" and puts descriptions and
	// extensions next to $ref.
	swagger2 dialect = iota
	// openapi3 refers to "#/components/schemas/" and wraps a property's
	// $ref in a one-element allOf so that its description and extensions
	// are not siblings of $ref.
	openapi3
)

func (d dialect) ref(name string) spec.Ref {
	if d == swagger2 {
		return spec.MustCreateRef("#/definitions/" + name)
	}
	return spec.MustCreateRef("#/components/schemas/" + name)
}

// Extension names Kubernetes clients read.
const (
	extGVK            = "x-kubernetes-group-version-kind"
	extAction         = "x-kubernetes-action"
	extPatchStrategy  = "x-kubernetes-patch-strategy"
	extPatchMergeKey  = "x-kubernetes-patch-merge-key"
	extListType       = "x-kubernetes-list-type"
	extListMapKeys    = "x-kubernetes-list-map-keys"
	extPreserveFields = "x-kubernetes-preserve-unknown-fields"
)

// generator derives named schemas from Go types by reflection.
//
// Invariants: every named struct type reached gets exactly one entry in
// defs, under ModelName; types maps each entry back to its Go type (two
// types with one name are an error), or to nil for the models of custom
// resources (defined first, by defineCustoms); refs records, per definition, the
// definitions its schema refers to directly ("" collects the references
// of operations), so that closures can be taken per document.
type generator struct {
	dialect dialect
	defs    map[string]*spec.Schema
	types   map[string]reflect.Type
	refs    map[string][]string
	// kinds maps top-level kinds to the GVKs they are served as.
	kinds map[reflect.Type][]schema.GroupVersionKind
	// current is the definition being built; references are recorded
	// under it.
	current string
	err     error
}

func newGenerator(d dialect, kinds map[reflect.Type][]schema.GroupVersionKind) *generator {
	return &generator{
		dialect: d, kinds: kinds,
		defs:  map[string]*spec.Schema{},
		types: map[string]reflect.Type{},
		refs:  map[string][]string{},
	}
}

// refTo defines t if needed and returns its name, recording the reference.
func (g *generator) refTo(t reflect.Type) string {
	name := ModelName(t)
	g.refs[g.current] = append(g.refs[g.current], name)
	if prev, ok := g.types[name]; ok {
		switch {
		case prev == nil:
			g.fail(fmt.Errorf("openapi: custom resource model %s has the name of the Go type %v", name, t))
		case prev != t:
			g.fail(fmt.Errorf("openapi: types %v and %v share the model name %s", prev, t, name))
		}
		return name
	}
	g.types[name] = t
	s := &spec.Schema{}
	g.defs[name] = s // in place before building, so recursive types terminate
	outer := g.current
	g.current = name
	*s = g.definition(t)
	g.current = outer
	return name
}

// isDefinition reports whether t gets a named definition rather than an
// inline schema: named structs and the specially encoded types.
func isDefinition(t reflect.Type) bool {
	if t.Name() == "" || t.PkgPath() == "" {
		return false
	}
	if _, ok := specialType(t); ok {
		return true
	}
	return t.Kind() == reflect.Struct
}

// definition builds the schema of a named type.
func (g *generator) definition(t reflect.Type) spec.Schema {
	if s, ok := specialType(t); ok {
		s.Description = typeDocs(t)[""]
		if g.dialect == openapi3 {
			s = oneOfForm(t, s)
		}
		return s
	}
	s := g.structSchema(t)
	g.applyFacts(ModelName(t), &s)
	if g.dialect == openapi3 {
		unwrapBareRefs(&s)
	}
	gvks := g.kinds[t]
	if f, ok := generatedFacts[ModelName(t)]; ok && len(f.gvks) > 0 {
		// The meta kinds list what kube-apiserver lists (in OpenAPI v3,
		// DeleteOptions and WatchEvent are narrowed per document).
		gvks = f.gvks
	}
	if len(gvks) > 0 {
		ext := make([]any, 0, len(gvks))
		for _, gvk := range gvks {
			ext = append(ext, map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
		}
		s.AddExtension(extGVK, ext)
	}
	return s
}

// structSchema builds an object schema from a struct's fields, flattening
// embedded (inline) structs as encoding/json does.
func (g *generator) structSchema(t reflect.Type) spec.Schema {
	s := spec.Schema{}
	s.Type = spec.StringOrArray{"object"}
	s.Description = typeDocs(t)[""]
	g.addFields(&s, t)
	return s
}

func (g *generator) addFields(s *spec.Schema, t reflect.Type) {
	docs := typeDocs(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := parseJSONTag(f.Tag.Get("json"))
		if tag.skip || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && tag.name == "" {
			if et := deref(f.Type); et.Kind() == reflect.Struct {
				g.addFields(s, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := tag.name
		if name == "" {
			name = f.Name
		}
		prop := g.fieldSchema(f, docs[name])
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties[name] = prop
		if !tag.omitEmpty {
			s.Required = append(s.Required, name)
		}
	}
}

// fieldSchema is the schema of one struct field: its type's schema plus
// the description and the merge extensions of the field.
func (g *generator) fieldSchema(f reflect.StructField, desc string) spec.Schema {
	t := deref(f.Type)
	var s spec.Schema
	if isDefinition(t) {
		ref := g.dialect.ref(g.refTo(t))
		if g.dialect == openapi3 {
			s.AllOf = []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: ref}}}
		} else {
			s.Ref = ref
		}
	} else {
		s = g.inline(t)
	}
	s.Description = desc
	addMergeExtensions(&s, f)
	return s
}

// itemSchema is the schema of a list item or map value: a bare $ref for
// definitions, an inline schema otherwise.
func (g *generator) itemSchema(t reflect.Type) spec.Schema {
	t = deref(t)
	if isDefinition(t) {
		return spec.Schema{SchemaProps: spec.SchemaProps{Ref: g.dialect.ref(g.refTo(t))}}
	}
	return g.inline(t)
}

// inline builds the schema of a type that has no definition of its own.
func (g *generator) inline(t reflect.Type) spec.Schema {
	switch t.Kind() {
	case reflect.String:
		return typed("string", "")
	case reflect.Bool:
		return typed("boolean", "")
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Int:
		return typed("integer", "int32")
	case reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return typed("integer", "int64")
	case reflect.Float32:
		return typed("number", "float")
	case reflect.Float64:
		return typed("number", "double")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return typed("string", "byte")
		}
		items := g.itemSchema(t.Elem())
		s := typed("array", "")
		s.Items = &spec.SchemaOrArray{Schema: &items}
		return s
	case reflect.Map:
		values := g.itemSchema(t.Elem())
		s := typed("object", "")
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &values}
		return s
	case reflect.Struct:
		return g.structSchema(t)
	case reflect.Pointer:
		return g.inline(deref(t))
	}
	// Interfaces and anything else: any JSON value.
	s := typed("object", "")
	s.AddExtension(extPreserveFields, true)
	return s
}

func typed(typ, format string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

type jsonTag struct {
	name      string
	omitEmpty bool
	skip      bool
}

func parseJSONTag(tag string) jsonTag {
	if tag == "-" {
		return jsonTag{skip: true}
	}
	parts := strings.Split(tag, ",")
	out := jsonTag{name: parts[0]}
	for _, opt := range parts[1:] {
		if opt == "omitempty" || opt == "omitzero" {
			out.omitEmpty = true
		}
	}
	return out
}

type swaggerDoc interface {
	SwaggerDoc() map[string]string
}

// typeDocs returns a type's SwaggerDoc map ("" is the type's own
// description, other keys are json field names), or an empty map.
func typeDocs(t reflect.Type) map[string]string {
	if docs, ok := ownDocs[t]; ok {
		return docs
	}
	if d, ok := reflect.Zero(t).Interface().(swaggerDoc); ok {
		return d.SwaggerDoc()
	}
	if d, ok := reflect.New(t).Interface().(swaggerDoc); ok {
		return d.SwaggerDoc()
	}
	return map[string]string{}
}

// closure returns the definitions reachable from roots through refs.
func (g *generator) closure(roots []string) map[string]*spec.Schema {
	out := map[string]*spec.Schema{}
	stack := append([]string(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, done := out[n]; done {
			continue
		}
		out[n] = g.defs[n]
		stack = append(stack, g.refs[n]...)
	}
	return out
}

// Types whose JSON form is not their Go structure.
var (
	durationType     = reflect.TypeFor[metav1.Duration]()
	fieldsV1Type     = reflect.TypeFor[metav1.FieldsV1]()
	rawExtensionType = reflect.TypeFor[runtime.RawExtension]()
)
