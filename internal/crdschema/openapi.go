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
// The /openapi/v2 form is derived from this one by package openapi.
//
// refPrefix is prepended to the ObjectMeta definition name:
// "#/components/schemas/" for v3. The root and every
// x-kubernetes-embedded-resource object get apiVersion and kind (type string)
// and metadata (the $ref); embedded resources also require apiVersion and
// kind. x-kubernetes-int-or-string is spelled out as anyOf [integer, string].
// The x-kubernetes-group-version-kind extension is the caller's to add (the
// schema does not know its GVK). Each call returns a fresh schema the caller
// may modify.
func (s *Schema) OpenAPI(refPrefix string) *spec.Schema {
	out := convert(s.props, forPublishing)
	addTypeAndObjectMeta(out, refPrefix)
	addEmbeddedMeta(out, refPrefix)
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
// resource below out.
func addEmbeddedMeta(out *spec.Schema, refPrefix string) {
	if out == nil {
		return
	}
	for k := range out.Properties {
		v := out.Properties[k]
		addEmbeddedMeta(&v, refPrefix)
		out.Properties[k] = v
	}
	if out.Items != nil {
		addEmbeddedMeta(out.Items.Schema, refPrefix)
	}
	if out.AdditionalProperties != nil {
		addEmbeddedMeta(out.AdditionalProperties.Schema, refPrefix)
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
