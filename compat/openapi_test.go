package compat

import (
	"sort"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// TestOpenAPIV3 compares /openapi/v3 and each group-version document
// setpoint serves: paths and operations (operationId, x-kubernetes-action,
// x-kubernetes-group-version-kind, parameters by in/name with their types
// and required flags, request and response media types and schema refs)
// and the schemas they reach (properties, types, formats, required, enums,
// defaults, x-kubernetes-* extensions). Descriptions are left out: setpoint
// writes its own prose. Each schema is compared once, in the first
// document that has it.
func TestOpenAPIV3(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "openapi", env.sink)
	defer rep.Finish()

	p := both(t, difftest.Request{Path: "/openapi/v3"})
	refIdx, _ := difftest.Get(p.Ref.JSON(), "paths").(map[string]any)
	spIdx, _ := difftest.Get(p.SP.JSON(), "paths").(map[string]any)
	var docs []string
	for key := range refIdx {
		if !openAPIDocServed(key) {
			continue
		}
		rep.Case()
		if _, ok := spIdx[key]; !ok {
			rep.Add("/openapi/v3", "paths["+key+"]", "listed", difftest.Absent)
			continue
		}
		docs = append(docs, key)
	}
	for key := range spIdx {
		if _, ok := refIdx[key]; !ok && openAPIDocServed(key) {
			rep.Add("/openapi/v3", "paths["+key+"]", difftest.Absent, "listed")
		}
	}
	sort.Strings(docs)
	seen := map[string]bool{}
	for _, key := range docs {
		p := both(t, difftest.Request{Path: "/openapi/v3/" + key})
		compareOpenAPI(rep, "/openapi/v3/"+key, p.Ref.JSON(), p.SP.JSON(), "components.schemas", "#/components/schemas/", seen)
	}
}

// TestOpenAPIV2 compares /openapi/v2 the same way (parameters given by
// reference are compared as the parameters they name).
func TestOpenAPIV2(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "openapi", env.sink)
	defer rep.Finish()
	p := both(t, difftest.Request{Path: "/openapi/v2", Header: map[string]string{"Accept": "application/json"}})
	compareOpenAPI(rep, "/openapi/v2", p.Ref.JSON(), p.SP.JSON(), "definitions", "#/definitions/", map[string]bool{})
}

// openAPIDocServed reports whether an /openapi/v3 index key is compared:
// the group-versions (and groups) setpoint serves a resource of, and the
// documents that are no group-version.
func openAPIDocServed(key string) bool {
	parts := strings.Split(key, "/")
	switch {
	case key == "api/v1":
		return true
	case parts[0] == "apis" && len(parts) >= 2:
		return groupServed(parts[1])
	}
	return true
}

// compareOpenAPI compares two documents of one dialect: top-level fields
// other than paths and schemas, every path item whose resource setpoint
// serves, and the schemas those items reach (each once per seen).
func compareOpenAPI(rep *difftest.Report, caseID string, ref, sp any, schemasAt, refPrefix string, seen map[string]bool) {
	refDoc, _ := ref.(map[string]any)
	spDoc, _ := sp.(map[string]any)
	if refDoc == nil || spDoc == nil {
		rep.Add(caseID, "", refDoc != nil, spDoc != nil)
		return
	}
	refParams, _ := refDoc["parameters"].(map[string]any)
	spParams, _ := spDoc["parameters"].(map[string]any)
	top := func(doc map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range doc {
			if k != "paths" && k != "components" && k != "definitions" && k != "parameters" {
				out[k] = stripDescriptions(difftest.Clone(v))
			}
		}
		return out
	}
	rep.Compare(caseID, top(refDoc), top(spDoc))

	refPaths, _ := refDoc["paths"].(map[string]any)
	spPaths, _ := spDoc["paths"].(map[string]any)
	var roots []string
	for _, path := range sortedKeys(refPaths) {
		if id := pathResource(path); id != "" && known(id) && !served(id) {
			continue
		}
		if g := pathGroup(path); g != "" && !groupServed(g) {
			continue
		}
		r := shapePathItem(refPaths[path], refParams)
		roots = append(roots, collectRefs(r, refPrefix)...)
		s, ok := spPaths[path]
		if !ok {
			rep.Case()
			rep.Add(caseID, "paths"+keyPath(path), "present", difftest.Absent)
			continue
		}
		rep.Compare(caseID, map[string]any{"paths": map[string]any{path: r}},
			map[string]any{"paths": map[string]any{path: shapePathItem(s, spParams)}})
	}
	for _, path := range sortedKeys(spPaths) {
		if g := pathGroup(path); g != "" && !groupServed(g) {
			continue
		}
		if _, ok := refPaths[path]; !ok {
			rep.Add(caseID, "paths"+keyPath(path), difftest.Absent, "present")
		}
	}

	refSchemas, _ := difftest.Get(refDoc, schemasAt).(map[string]any)
	spSchemas, _ := difftest.Get(spDoc, schemasAt).(map[string]any)
	for _, name := range closure(roots, refSchemas, refPrefix) {
		if seen[name] {
			continue
		}
		seen[name] = true
		r := stripDescriptions(difftest.Clone(refSchemas[name]))
		s, ok := spSchemas[name]
		if !ok {
			rep.Case()
			rep.Add(caseID, "schemas"+keyPath(name), "present", difftest.Absent)
			continue
		}
		rep.Compare(caseID, map[string]any{"schemas": map[string]any{name: r}},
			map[string]any{"schemas": map[string]any{name: stripDescriptions(difftest.Clone(s))}})
	}
}

// pathGroup is the group of an /apis/<group>/... path, "" for others.
func pathGroup(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) >= 2 && segs[0] == "apis" {
		return segs[1]
	}
	return ""
}

// keyPath is the report path of one object key.
func keyPath(key string) string { return strings.TrimPrefix(difftest.JoinKey("x", key), "x") }

// pathResource maps an API path to the resource id it serves
// ("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale" to
// "apps/v1/deployments/scale"), or "" for discovery paths.
func pathResource(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var group, version string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		version, segs = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, version, segs = segs[1], segs[2], segs[3:]
	default:
		return ""
	}
	if segs[0] == "watch" {
		segs = segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" && segs[1] == "{namespace}" {
		segs = segs[2:]
	}
	if len(segs) == 0 || segs[0] == "" {
		return ""
	}
	name := segs[0]
	if len(segs) >= 3 {
		name += "/" + segs[2]
	}
	return resourceID(group, version, name)
}

// shapePathItem prepares a path item for comparison: descriptions
// dropped, parameter lists (of the item and of each operation) turned into
// objects keyed by "in:name", parameter references resolved.
func shapePathItem(item any, params map[string]any) any {
	m, ok := difftest.Clone(item).(map[string]any)
	if !ok {
		return item
	}
	stripDescriptions(m)
	if ps, ok := m["parameters"]; ok {
		m["parameters"], m["parameterOrder"] = keyParams(ps, params)
	}
	for k, op := range m {
		if o, ok := op.(map[string]any); ok && k != "parameters" && k != "parameterOrder" {
			if ps, ok := o["parameters"]; ok {
				o["parameters"], o["parameterOrder"] = keyParams(ps, params)
			}
		}
	}
	return m
}

// keyParams keys a parameter list by "in:name" and returns the names in
// their order too.
func keyParams(list any, params map[string]any) (any, any) {
	l, ok := list.([]any)
	if !ok {
		return list, nil
	}
	out := map[string]any{}
	var order []any
	for _, p := range l {
		pm, _ := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			if named, ok := params[strings.TrimPrefix(ref, "#/parameters/")].(map[string]any); ok {
				pm = stripDescriptions(difftest.Clone(named)).(map[string]any)
			}
		}
		name, _ := pm["name"].(string)
		in, _ := pm["in"].(string)
		out[in+":"+name] = pm
		order = append(order, name)
	}
	return out, order
}

// stripDescriptions removes every "description" whose value is a string
// (prose), in place, and returns v. A one-element allOf left alone by
// that becomes the bare $ref it wraps: the wrapping only gave the
// reference a description.
func stripDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if _, isStr := val.(string); isStr && k == "description" {
				delete(x, k)
				continue
			}
			stripDescriptions(val)
		}
		if all, ok := x["allOf"].([]any); ok && len(all) == 1 && len(x) == 1 {
			if ref, ok := all[0].(map[string]any); ok && len(ref) == 1 && ref["$ref"] != nil {
				delete(x, "allOf")
				x["$ref"] = ref["$ref"]
			}
		}
	case []any:
		for _, val := range x {
			stripDescriptions(val)
		}
	}
	return v
}

// collectRefs returns the schema names v refers to with prefix.
func collectRefs(v any, prefix string) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, prefix) {
				out = append(out, strings.TrimPrefix(ref, prefix))
			}
			for _, val := range x {
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	walk(v)
	return out
}

// closure returns the schemas reachable from roots, sorted.
func closure(roots []string, schemas map[string]any, prefix string) []string {
	seen := map[string]bool{}
	stack := append([]string(nil), roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, collectRefs(schemas[n], prefix)...)
	}
	return sortedKeys(seen)
}
