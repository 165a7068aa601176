package crdschema

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// objectMetaName is the OpenAPI definition name of ObjectMeta.
const objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// OpenAPI returns the schema in kube-openapi form (spec.Schema), for publishing in /openapi/v2 and /openapi/v3 and for
// building server-side-apply type converters: the same conversion Kubernetes publishes (x-kubernetes-* extensions kept,
// apiVersion/kind/metadata properties filled in for the root as Kubernetes does with a $ref to ObjectMeta
// "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" for v3 — make the ref prefix a parameter).
//
// refPrefix is prepended to the ObjectMeta definition name: "#/components/schemas/"
// for v3, "#/definitions/" for v2. The root and every
// x-kubernetes-embedded-resource object get apiVersion and kind (type string)
// and metadata (the $ref); embedded resources also require apiVersion and
// kind. x-kubernetes-int-or-string is spelled out as anyOf [integer, string].
// The x-kubernetes-group-version-kind extension is the caller's to add (the
// schema does not know its GVK). Each call returns a fresh schema the caller
// may modify.
func (s *Schema) OpenAPI(refPrefix string) *spec.Schema {
	out := convert(s.props, forPublishing)
	addTypeAndObjectMeta(out, refPrefix)
	addEmbeddedMeta(out, refPrefix, false)
	return out
}

// OpenAPIV2 returns the schema as Kubernetes publishes it in /openapi/v2,
// whose dialect has no nullable, anyOf, allOf, oneOf or not: those are
// dropped, a nullable field loses its type and structure and leaves its
// parent's required list, a preserve-unknown-fields object loses its
// properties, items and type. A root that preserves unknown fields becomes a
// bare {type: object}, so kubectl's client-side validation accepts anything.
// refPrefix is normally "#/definitions/".
func (s *Schema) OpenAPIV2(refPrefix string) *spec.Schema {
	if preserveUnknown(s.props) {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	}
	out := convert(s.props, forPublishing)
	toV2(out)
	addTypeAndObjectMeta(out, refPrefix)
	addEmbeddedMeta(out, refPrefix, true)
	return out
}

func addTypeAndObjectMeta(out *spec.Schema, refPrefix string) {
	typeMeta := metav1.TypeMeta{}.SwaggerDoc()
	out.SetProperty("apiVersion", *spec.StringProperty().WithDescription(typeMeta["apiVersion"]))
	out.SetProperty("kind", *spec.StringProperty().WithDescription(typeMeta["kind"]))
	metaDoc := metav1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]
	out.SetProperty("metadata", *spec.RefSchema(refPrefix + objectMetaName).WithDescription(metaDoc))
}

// addEmbeddedMeta fills in TypeMeta and ObjectMeta on every embedded
// resource below out. In v2, objects preserving unknown fields are left
// alone: the extra properties would make kubectl reject unknown fields.
func addEmbeddedMeta(out *spec.Schema, refPrefix string, v2 bool) {
	if out == nil {
		return
	}
	for k := range out.Properties {
		v := out.Properties[k]
		addEmbeddedMeta(&v, refPrefix, v2)
		out.Properties[k] = v
	}
	if out.Items != nil {
		addEmbeddedMeta(out.Items.Schema, refPrefix, v2)
	}
	if out.AdditionalProperties != nil {
		addEmbeddedMeta(out.AdditionalProperties.Schema, refPrefix, v2)
	}
	if preserve, _ := out.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); preserve && v2 {
		return
	}
	if embedded, _ := out.Extensions.GetBool("x-kubernetes-embedded-resource"); !embedded {
		return
	}
	addTypeAndObjectMeta(out, refPrefix)
	for _, req := range []string{"kind", "apiVersion"} {
		if !slices.Contains(out.Required, req) {
			out.Required = append(out.Required, req)
		}
	}
}

// toV2 rewrites a published schema into the v2 dialect, in place.
func toV2(s *spec.Schema) {
	if s == nil {
		return
	}
	s.AllOf, s.OneOf, s.AnyOf, s.Not = nil, nil, nil, nil
	preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	if s.Nullable {
		s.Type, s.Nullable = nil, false
		s.Items, s.Properties = nil, nil
	}
	if preserve {
		s.Items, s.Properties = nil, nil
		if s.Type.Contains("object") && len(s.Type) == 1 {
			s.Type = nil
		}
	}
	if s.Items == nil && len(s.Type) == 1 && s.Type[0] == "array" {
		s.Type = nil
	}
	for k := range s.Properties {
		v := s.Properties[k]
		if v.Nullable {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == k })
		}
		toV2(&v)
		s.Properties[k] = v
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		if s.AdditionalProperties.Schema.Nullable {
			s.Required = nil
		}
		toV2(s.AdditionalProperties.Schema)
	}
	if s.Items != nil {
		toV2(s.Items.Schema)
	}
}
