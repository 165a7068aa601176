package crdschema

import (
	"reflect"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// supportedStringFormats are the string formats Kubernetes validates in
// custom resources (normalized without dashes, as go-openapi looks them up).
// Other formats on strings are dropped from the validation schema, so they
// are documentation only, as in Kubernetes.
var supportedStringFormats = map[string]bool{
	"bsonobjectid": true, "uri": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true,
	"cidr": true, "mac": true, "uuid": true, "uuid3": true, "uuid4": true, "uuid5": true,
	"isbn": true, "isbn10": true, "isbn13": true, "creditcard": true, "ssn": true,
	"hexcolor": true, "rgbcolor": true, "byte": true, "password": true, "date": true,
	"duration": true, "datetime": true,
}

// validationFormat returns the format the validator should enforce for a
// schema of the given type, or "" when Kubernetes ignores it.
func validationFormat(typ, format string) string {
	switch typ {
	case "", "string":
		if supportedStringFormats[strings.ReplaceAll(format, "-", "")] {
			return format
		}
	case "integer":
		if format == "int32" || format == "int64" {
			return format
		}
	case "number":
		if format == "float" || format == "double" {
			return format
		}
	}
	return ""
}

// convertMode selects between the two spec.Schema forms of a CRD schema.
type convertMode int

const (
	// forValidation: int-or-string becomes type [integer, string];
	// unsupported formats are dropped.
	forValidation convertMode = iota
	// forPublishing: the form Kubernetes publishes: int-or-string keeps an
	// empty type and gains anyOf [{type: integer}, {type: string}] (unless
	// already spelled out); formats are kept as written.
	forPublishing
)

func toValidationSchema(s *apiextv1.JSONSchemaProps) *spec.Schema {
	return convert(s, forValidation)
}

// convert turns a CRD schema into kube-openapi's form, keeping the
// x-kubernetes-* extensions.
func convert(s *apiextv1.JSONSchemaProps, mode convertMode) *spec.Schema {
	if s == nil {
		return nil
	}
	out := &spec.Schema{}
	if s.Type != "" {
		out.Type = spec.StringOrArray{s.Type}
	}
	out.Format = s.Format
	if mode == forValidation {
		out.Format = validationFormat(s.Type, s.Format)
		if s.XIntOrString {
			out.Type = spec.StringOrArray{"integer", "string"}
		}
	}
	out.Description = s.Description
	out.Title = s.Title
	out.Nullable = s.Nullable
	out.Maximum, out.ExclusiveMaximum = s.Maximum, s.ExclusiveMaximum
	out.Minimum, out.ExclusiveMinimum = s.Minimum, s.ExclusiveMinimum
	out.MaxLength, out.MinLength = s.MaxLength, s.MinLength
	out.Pattern = s.Pattern
	out.MaxItems, out.MinItems = s.MaxItems, s.MinItems
	out.UniqueItems = s.UniqueItems
	out.MultipleOf = s.MultipleOf
	out.MaxProperties, out.MinProperties = s.MaxProperties, s.MinProperties
	if len(s.Required) > 0 {
		out.Required = append([]string(nil), s.Required...)
	}
	if s.Default != nil {
		out.Default = defaultValue(s.Default)
	}
	if s.Example != nil {
		out.Example = defaultValue(s.Example)
	}
	if s.ExternalDocs != nil {
		out.ExternalDocs = &spec.ExternalDocumentation{Description: s.ExternalDocs.Description, URL: s.ExternalDocs.URL}
	}
	for i := range s.Enum {
		out.Enum = append(out.Enum, defaultValue(&s.Enum[i]))
	}
	for i := range s.AllOf {
		out.AllOf = append(out.AllOf, *convert(&s.AllOf[i], mode))
	}
	for i := range s.OneOf {
		out.OneOf = append(out.OneOf, *convert(&s.OneOf[i], mode))
	}
	for i := range s.AnyOf {
		out.AnyOf = append(out.AnyOf, *convert(&s.AnyOf[i], mode))
	}
	out.Not = convert(s.Not, mode)
	if s.Properties != nil {
		out.Properties = make(map[string]spec.Schema, len(s.Properties))
		for k := range s.Properties {
			prop := s.Properties[k]
			out.Properties[k] = *convert(&prop, mode)
		}
	}
	if s.AdditionalProperties != nil {
		out.AdditionalProperties = &spec.SchemaOrBool{
			Allows: s.AdditionalProperties.Allows || s.AdditionalProperties.Schema != nil,
			Schema: convert(s.AdditionalProperties.Schema, mode),
		}
	}
	if items := itemsSchema(s); items != nil {
		out.Items = &spec.SchemaOrArray{Schema: convert(items, mode)}
	}
	if mode == forPublishing && s.XIntOrString {
		unfoldIntOrString(out)
	}
	addExtensions(out, s)
	return out
}

// unfoldIntOrString spells x-kubernetes-int-or-string out as anyOf, the way
// Kubernetes publishes it: anyOf when there is none, else a first allOf
// entry, unless one of the two is already there.
func unfoldIntOrString(out *spec.Schema) {
	alternatives := []spec.Schema{
		{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}}},
		{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}},
	}
	isPattern := func(anyOf []spec.Schema) bool {
		return len(anyOf) == 2 && isOnlyType(anyOf[0], "integer") && isOnlyType(anyOf[1], "string")
	}
	if isPattern(out.AnyOf) || (len(out.AllOf) > 0 && isPattern(out.AllOf[0].AnyOf)) {
		return
	}
	if out.AnyOf == nil {
		out.AnyOf = alternatives
		return
	}
	out.AllOf = append([]spec.Schema{{SchemaProps: spec.SchemaProps{AnyOf: alternatives}}}, out.AllOf...)
}

func isOnlyType(s spec.Schema, typ string) bool {
	return reflect.DeepEqual(s, spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}}})
}

func addExtensions(out *spec.Schema, s *apiextv1.JSONSchemaProps) {
	if preserveUnknown(s) {
		out.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	}
	if s.XEmbeddedResource {
		out.AddExtension("x-kubernetes-embedded-resource", true)
	}
	if s.XIntOrString {
		out.AddExtension("x-kubernetes-int-or-string", true)
	}
	if len(s.XListMapKeys) > 0 {
		keys := make([]any, len(s.XListMapKeys))
		for i, k := range s.XListMapKeys {
			keys[i] = k
		}
		out.AddExtension("x-kubernetes-list-map-keys", keys)
	}
	if s.XListType != nil {
		out.AddExtension("x-kubernetes-list-type", *s.XListType)
	}
	if s.XMapType != nil {
		out.AddExtension("x-kubernetes-map-type", *s.XMapType)
	}
}
