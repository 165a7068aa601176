package crdschema

import (
	"sort"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Prune removes, in place, fields the schema does not specify, at every level, honouring x-kubernetes-preserve-unknown-fields
// and x-kubernetes-embedded-resource (apiVersion, kind, metadata are kept there); at the root apiVersion, kind and metadata are
// always kept (metadata is not pruned by the schema; metadata.name/generateName and the other ObjectMeta fields are the
// server's business). It returns the pruned fields' paths in Kubernetes' warning form, sorted: e.g. "spec.foo", "spec.items[0].bar".
//
// Edge cases, as in Kubernetes: under x-kubernetes-preserve-unknown-fields
// unknown fields stay, but fields that the schema does specify below it are
// pruned by their own schemas; a map value under additionalProperties without
// a schema (additionalProperties: true) loses all its fields, since nothing
// below it is specified; values of a type other than the schema says (a
// string where an object is specified) are left for Validate; a nil obj
// returns nil. Prune never adds fields.
func (s *Schema) Prune(obj map[string]any) []string {
	if obj == nil {
		return nil
	}
	root := *s.props
	root.XEmbeddedResource = true
	pr := pruner{}
	pr.value(obj, &root)
	sort.Strings(pr.pruned)
	return pr.pruned
}

// pruner walks a value with its schema and records what it deletes.
type pruner struct {
	// path is the current location as path elements: keys joined with "."
	// and indexes as "[i]" (Kubernetes' warning form).
	path []string
	// pruned collects the paths of deleted fields.
	pruned []string
}

func (pr *pruner) pushKey(k string) {
	if len(pr.path) > 0 {
		pr.path = append(pr.path, ".")
	}
	pr.path = append(pr.path, k)
}

func (pr *pruner) pushIndex(i int) {
	pr.path = append(pr.path, "[", strconv.Itoa(i), "]")
}

func (pr *pruner) record(k string) {
	n := len(pr.path)
	pr.pushKey(k)
	pr.pruned = append(pr.pruned, strings.Join(pr.path, ""))
	pr.path = pr.path[:n]
}

// value prunes x against s; a nil s means nothing below x is specified.
func (pr *pruner) value(x any, s *apiextv1.JSONSchemaProps) {
	if preserveUnknown(s) {
		pr.preserved(x, s)
		return
	}
	n := len(pr.path)
	switch x := x.(type) {
	case map[string]any:
		for _, k := range sortedValueKeys(x) {
			if s != nil && s.XEmbeddedResource && isMetaField(k) {
				continue
			}
			if sub, ok := childSchema(s, k); ok {
				pr.pushKey(k)
				pr.value(x[k], sub)
				pr.path = pr.path[:n]
				continue
			}
			pr.record(k)
			delete(x, k)
		}
	case []any:
		items := itemsSchema(s)
		for i, v := range x {
			pr.pushIndex(i)
			pr.value(v, items)
			pr.path = pr.path[:n]
		}
	}
}

// preserved walks a value under x-kubernetes-preserve-unknown-fields: only
// the fields the schema specifies are descended into (and pruned there).
func (pr *pruner) preserved(x any, s *apiextv1.JSONSchemaProps) {
	n := len(pr.path)
	switch x := x.(type) {
	case map[string]any:
		for _, k := range sortedValueKeys(x) {
			if s.XEmbeddedResource && isMetaField(k) {
				continue
			}
			if sub, ok := childSchema(s, k); ok {
				pr.pushKey(k)
				pr.value(x[k], sub)
				pr.path = pr.path[:n]
			}
		}
	case []any:
		items := itemsSchema(s)
		if items == nil {
			return
		}
		for i, v := range x {
			pr.pushIndex(i)
			pr.preserved(v, items)
			pr.path = pr.path[:n]
		}
	}
}

// childSchema returns the schema of field k of an object with schema s: its
// property, else the additionalProperties schema (possibly nil). ok is false
// when s does not specify k at all.
func childSchema(s *apiextv1.JSONSchemaProps, k string) (*apiextv1.JSONSchemaProps, bool) {
	if s == nil {
		return nil, false
	}
	if prop, ok := s.Properties[k]; ok {
		return &prop, true
	}
	return additionalSchema(s)
}

func sortedValueKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
