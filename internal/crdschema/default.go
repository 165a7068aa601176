package crdschema

import (
	"encoding/json"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Default applies the schema's defaults in place, as Kubernetes does (after pruning; defaults inside array items and
// additionalProperties values; a default applies when the field is absent, and nullable:false nulls are dropped/defaulted as Kubernetes does).
//
// In detail: first every null whose schema is not nullable and has no default
// is removed from its object (nulls inside arrays stay, for Validate to
// report); then, walking down, a property with a default is set to a deep
// copy of it when absent or when null and not nullable, and a null array item
// or additionalProperties value whose schema has a default gets it. Absent
// parents are not created: a default below spec applies only if spec exists
// (or spec itself has a default, which is applied first and then defaulted
// within). Defaults under x-kubernetes-preserve-unknown-fields apply too. A
// nil obj is left alone.
func (s *Schema) Default(obj map[string]any) {
	if obj == nil {
		return
	}
	dropNonNullableNulls(obj, s.props)
	applyDefaults(obj, s.props)
}

// dropNonNullableNulls removes object fields that are null although their
// schema is neither nullable nor defaulted.
func dropNonNullableNulls(x any, s *apiextv1.JSONSchemaProps) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			sub, _ := childSchema(s, k)
			if v == nil && sub != nil && !sub.Nullable && sub.Default == nil {
				delete(x, k)
				continue
			}
			dropNonNullableNulls(v, sub)
		}
	case []any:
		items := itemsSchema(s)
		for _, v := range x {
			dropNonNullableNulls(v, items)
		}
	}
}

func isNonNullableNull(v any, s *apiextv1.JSONSchemaProps) bool {
	return v == nil && s != nil && !s.Nullable
}

// applyDefaults sets absent (or non-nullable null) fields that have defaults,
// then descends.
func applyDefaults(x any, s *apiextv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for _, k := range sortedKeys(s.Properties) {
			prop := s.Properties[k]
			if prop.Default == nil {
				continue
			}
			if v, found := x[k]; !found || isNonNullableNull(v, &prop) {
				x[k] = defaultValue(prop.Default)
			}
		}
		ap, hasAP := additionalSchema(s)
		for k, v := range x {
			if prop, ok := s.Properties[k]; ok {
				applyDefaults(v, &prop)
				continue
			}
			if !hasAP {
				continue
			}
			if isNonNullableNull(v, ap) && ap.Default != nil {
				x[k] = defaultValue(ap.Default)
			}
			applyDefaults(x[k], ap)
		}
	case []any:
		items := itemsSchema(s)
		for i := range x {
			if isNonNullableNull(x[i], items) && items.Default != nil {
				x[i] = defaultValue(items.Default)
			}
			applyDefaults(x[i], items)
		}
	}
}

// defaultValue decodes a schema default into a fresh JSON value (integers as
// int64, as apimachinery decodes request bodies). Compile has checked that
// every default is valid JSON, so a decode failure cannot happen for a
// compiled schema; it yields nil.
func defaultValue(d *apiextv1.JSON) any {
	var v any
	if err := utiljson.Unmarshal(d.Raw, &v); err != nil {
		return nil
	}
	return normalizeNumbers(v)
}

// normalizeNumbers turns json.Number leftovers into int64/float64, so that
// default values look like decoded request bodies.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// unmarshalJSON decodes as apimachinery decodes request bodies (integers
// become int64).
func unmarshalJSON(data []byte, v *any) error {
	return utiljson.Unmarshal(data, v)
}

// DefaultStatus gives an object without status the schema's default
// status (and the defaults within it), as Kubernetes shows an object whose
// status a write dropped (the status subresource's create, an update of
// the main resource of an object that had none): Kubernetes defaults
// objects when it reads them from storage, so the answer to such a write
// and every later read carry the default status. Nothing happens when the
// schema gives status no default or obj has one.
func (s *Schema) DefaultStatus(obj map[string]any) {
	if obj == nil {
		return
	}
	prop, ok := s.props.Properties["status"]
	if !ok || prop.Default == nil {
		return
	}
	if _, has := obj["status"]; has {
		return
	}
	obj["status"] = defaultValue(prop.Default)
	applyDefaults(obj["status"], &prop)
}
