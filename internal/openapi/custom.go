package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Custom resources (registry.Resource.Unstructured) have no Go type to
// reflect: their kind's model is the published Schema, and their list
// model is built here, as Kubernetes builds the list of a custom resource.

// listModelName is the model name of a custom resource's list kind.
func listModelName(name string) string { return name + "List" }

// refTypes are the Go types a custom resource's schema may refer to, by
// model name: the metadata types Kubernetes puts into custom resource
// schemas. Read-only.
var refTypes = func() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, t := range []reflect.Type{
		reflect.TypeFor[metav1.ObjectMeta](), reflect.TypeFor[metav1.ListMeta](),
	} {
		out[ModelName(t)] = t
	}
	return out
}()

var (
	typeMetaType = reflect.TypeFor[metav1.TypeMeta]()
	listMetaType = reflect.TypeFor[metav1.ListMeta]()
)

// refModel returns the definition name of m, defining Go types on first
// use and recording the reference. Custom models must have been defined
// by defineCustoms.
func (g *generator) refModel(m model) string {
	if m.t != nil {
		return g.refTo(m.t)
	}
	g.refs[g.current] = append(g.refs[g.current], m.name)
	if _, ok := g.defs[m.name]; !ok {
		g.fail(fmt.Errorf("openapi: no definition of custom model %s", m.name))
	}
	return m.name
}

func (g *generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// defineCustoms adds the kind and list models of the custom resources
// among kinds, in g's dialect, before any operation refers to them.
func (g *generator) defineCustoms(kinds []kindInfo) {
	custom := map[string]bool{}
	for _, k := range kinds {
		custom[k.obj.name], custom[k.objList.name] = true, true
	}
	for _, k := range kinds {
		g.addCustom(k.obj.name, func() spec.Schema {
			s, refs, err := customSchema(k.r.Schema, g.dialect)
			if err != nil {
				g.fail(fmt.Errorf("openapi: resource %s: schema: %w", k.r.GVR(), err))
				return s
			}
			for _, name := range refs {
				switch t, known := refTypes[name]; {
				case custom[name]:
					g.refs[g.current] = append(g.refs[g.current], name)
				case known:
					g.refTo(t)
				default:
					g.fail(fmt.Errorf("openapi: resource %s: schema refers to %q, which is neither a custom resource model nor one of %v",
						k.r.GVR(), name, knownRefNames()))
				}
			}
			addGVK(&s, k.r.GVK())
			return s
		})
		g.addCustom(k.objList.name, func() spec.Schema { return g.customList(k) })
	}
}

// addCustom defines name with the schema build returns; references made
// while building are recorded under name.
func (g *generator) addCustom(name string, build func() spec.Schema) {
	if _, dup := g.defs[name]; dup {
		g.fail(fmt.Errorf("openapi: model name %s is claimed twice", name))
		return
	}
	g.types[name] = nil
	s := &spec.Schema{}
	g.defs[name] = s
	outer := g.current
	g.current = name
	*s = build()
	g.current = outer
}

// customList builds the list model of a custom resource: apiVersion,
// kind, metadata (ListMeta) and the required items, an array of the kind.
func (g *generator) customList(k kindInfo) spec.Schema {
	r := k.r
	docs := typeDocs(typeMetaType)
	s := typed("object", "")
	s.Description = r.ListKind + " is a list of " + r.Kind
	s.Required = []string{"items"}
	apiVersion, kind := typed("string", ""), typed("string", "")
	apiVersion.Description, kind.Description = docs["apiVersion"], docs["kind"]
	item := spec.Schema{SchemaProps: spec.SchemaProps{Ref: g.dialect.ref(g.refModel(k.obj))}}
	items := typed("array", "")
	items.Items = &spec.SchemaOrArray{Schema: &item}
	items.Description = "List of " + r.Resource + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
	metadata := g.propertyRef(g.refTo(listMetaType))
	metadata.Description = typeDocs(reflect.TypeFor[metav1.List]())["metadata"]
	s.Properties = map[string]spec.Schema{"apiVersion": apiVersion, "kind": kind, "metadata": metadata, "items": items}
	addGVK(&s, r.GroupVersion().WithKind(r.ListKind))
	return s
}

// propertyRef is a property referring to the definition name: a bare $ref
// in Swagger 2.0, a one-element allOf in OpenAPI v3 (so that the
// property's description is no $ref sibling).
func (g *generator) propertyRef(name string) spec.Schema {
	ref := spec.Schema{SchemaProps: spec.SchemaProps{Ref: g.dialect.ref(name)}}
	if g.dialect == openapi3 {
		return spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{ref}}}
	}
	return ref
}

// addGVK sets the x-kubernetes-group-version-kind of a top-level model,
// replacing (not modifying) s's extension map, which may be shared.
func addGVK(s *spec.Schema, gvk schema.GroupVersionKind) {
	ext := make(spec.Extensions, len(s.Extensions)+1)
	for k, v := range s.Extensions {
		ext[k] = v
	}
	ext[extGVK] = []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}}
	s.Extensions = ext
}

func knownRefNames() []string {
	out := make([]string, 0, len(refTypes))
	for name := range refTypes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// modelOfRef returns the model name of a local reference
// ("#/components/schemas/<name>" or "#/definitions/<name>").
func modelOfRef(ref string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok {
		name, ok = strings.CutPrefix(ref, "#/definitions/")
	}
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("unsupported $ref %q: only references to models (#/components/schemas/<name>) are allowed", ref)
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(name), nil
}
