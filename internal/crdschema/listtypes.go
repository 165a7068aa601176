package crdschema

import (
	"encoding/json"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateListTypes reports duplicates in lists with x-kubernetes-list-type
// set (equal items) or map (equal key tuples), at any depth. Each duplicate
// is reported once, at the index of its second occurrence, as Kubernetes
// does; map items that are not objects are Invalid.
func validateListTypes(p *field.Path, s *apiextv1.JSONSchemaProps, x any) field.ErrorList {
	if s == nil {
		return nil
	}
	switch x := x.(type) {
	case map[string]any:
		var errs field.ErrorList
		ap, _ := additionalSchema(s)
		for _, k := range sortedValueKeys(x) {
			if prop, ok := s.Properties[k]; ok {
				errs = append(errs, validateListTypes(p.Child(k), &prop, x[k])...)
			} else if ap != nil {
				errs = append(errs, validateListTypes(p.Key(k), ap, x[k])...)
			}
		}
		return errs
	case []any:
		var errs field.ErrorList
		if s.XListType != nil {
			switch *s.XListType {
			case "set":
				for _, i := range duplicates(x) {
					errs = append(errs, field.Duplicate(p.Index(i), x[i]))
				}
			case "map":
				errs = append(errs, validateListMap(p, s.XListMapKeys, x)...)
			}
		}
		items := itemsSchema(s)
		for i := range x {
			errs = append(errs, validateListTypes(p.Index(i), items, x[i])...)
		}
		return errs
	}
	return nil
}

func validateListMap(p *field.Path, keyFields []string, x []any) field.ErrorList {
	keys := make([]any, 0, len(x))
	for i, item := range x {
		m, ok := item.(map[string]any)
		if item != nil && !ok {
			return field.ErrorList{field.Invalid(p.Index(i), item, "must be an object for an array of list-type map")}
		}
		key := map[string]any{}
		for _, f := range keyFields {
			if v, ok := m[f]; ok {
				key[f] = v
			}
		}
		keys = append(keys, key)
	}
	var errs field.ErrorList
	for _, i := range duplicates(keys) {
		errs = append(errs, field.Duplicate(p.Index(i), keys[i]))
	}
	return errs
}

// duplicates returns the index of the second occurrence of every value that
// occurs more than once, in order. Values are compared by their JSON form,
// so 1 (int64) and 1.0 (float64) are equal.
func duplicates(x []any) []int {
	if len(x) <= 1 {
		return nil
	}
	seen := make(map[string]int, len(x))
	var dups []int
	for i, v := range x {
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		k := string(b)
		seen[k]++
		if seen[k] == 2 {
			dups = append(dups, i)
		}
	}
	return dups
}
