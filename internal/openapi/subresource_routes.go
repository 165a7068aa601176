package openapi

import (
	"reflect"
	"slices"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// kindSubresourceRoutes returns the routes of one of a kind's own
// subresources, named as kube-apiserver names their operations:
//   - Update subresources (namespaces/finalize, pods/ephemeralcontainers):
//     read, replace and patch of the kind's object, as its verbs allow;
//   - Action subresources (pods/binding, pods/eviction): a create taking
//     and answering the action's body type;
//   - Connect subresources: a read answering a string for those served as
//     a get (pods/log), else one connect operation per HTTP method, plus
//     the same under /{path} for those taking a subpath (proxy); their
//     query parameters are the fields of the options type.
func (k kindInfo) kindSubresourceRoutes(sr registry.Subresource, item string, itemParams []param, scope string) []route {
	r := k.r
	suffix := scope + r.Kind + capitalize(sr.Name)
	path := item + "/" + sr.Name
	switch {
	case sr.Update != nil:
		var ops []operation
		if slices.Contains(sr.Verbs, "get") {
			ops = append(ops, k.read("read"+k.gvPrefix+suffix, "read "+sr.Name+" of the specified "+r.Kind, k.obj))
		}
		if slices.Contains(sr.Verbs, "update") {
			ops = append(ops, k.replace("replace"+k.gvPrefix+suffix, "replace "+sr.Name+" of the specified "+r.Kind, k.obj))
		}
		if slices.Contains(sr.Verbs, "patch") {
			ops = append(ops, k.patch("patch"+k.gvPrefix+suffix, "partially update "+sr.Name+" of the specified "+r.Kind, r.GVK(), k.obj))
		}
		return []route{{path: path, params: with(itemParams, prettyParam), ops: ops}}
	case sr.Action != nil:
		body := typeModel(deref(reflect.TypeOf(sr.Action.NewBody())))
		op := k.create()
		op.id = "create" + k.gvPrefix + suffix
		op.desc = "create " + sr.Name + " of a " + r.Kind
		op.gvk = sr.Kind
		op.body = body
		op.responses = okCreatedAccepted(body)
		return []route{{path: path, params: with(itemParams, prettyParam), ops: []operation{op}}}
	case sr.Connect != nil:
		return k.connectRoutes(sr, path, itemParams, suffix)
	}
	return nil
}

func (k kindInfo) connectRoutes(sr registry.Subresource, path string, itemParams []param, suffix string) []route {
	c := sr.Connect
	var opts []param
	if c.NewOptions != nil {
		opts = optionParams(deref(reflect.TypeOf(c.NewOptions())))
	}
	if slices.Equal(sr.Verbs, []string{"get"}) && !c.Subpath {
		op := k.op("get", "get", "read"+k.gvPrefix+suffix, "read "+sr.Name+" of the specified "+k.r.Kind)
		op.gvk = sr.Kind
		// As kube-apiserver, which serves it as a get: with pretty.
		op.query = append(opts, prettyParam)
		slices.SortFunc(op.query, func(a, b param) int { return strings.Compare(a.name, b.name) })
		op.produces = []string{"text/plain", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
		op.responses = []response{{200, "OK", stringModel}}
		return []route{{path: path, params: itemParams, ops: []operation{op}}}
	}
	build := func(withPath bool) route {
		rt := route{path: path, params: itemParams}
		name := suffix
		if withPath {
			rt.path += "/{path}"
			rt.params = with(itemParams, pathParam)
			name += "WithPath"
		}
		for _, m := range c.Methods {
			method := strings.ToLower(m)
			op := k.op(method, "connect", "connect"+k.gvPrefix+capitalize(method)+name,
				"connect "+m+" requests to "+sr.Name+" of "+k.r.Kind)
			op.gvk = sr.Kind
			op.query = opts
			op.produces, op.consumes = anyMediaType, anyMediaType
			op.responses = []response{{200, "OK", stringModel}}
			rt.ops = append(rt.ops, op)
		}
		return rt
	}
	out := []route{build(false)}
	if c.Subpath {
		out = append(out, build(true))
	}
	return out
}

// optionParams are the query parameters of a connect subresource: the
// fields of its options type, by JSON name, with their documentation;
// a list is typed by its items, and struct-typed fields (PodLogOptions'
// sinceTime) are left out, as kube-apiserver publishes them.
func optionParams(t reflect.Type) []param {
	docs := typeDocs(t)
	var out []param
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := deref(f.Type)
		if ft.Kind() == reflect.Slice {
			ft = deref(ft.Elem())
		}
		if f.Anonymous || name == "" || name == "-" || ft.Kind() == reflect.Struct {
			continue
		}
		typ := "string"
		switch ft.Kind() {
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			typ = "integer"
		}
		out = append(out, query(name, typ, docs[name]))
	}
	slices.SortFunc(out, func(a, b param) int { return strings.Compare(a.name, b.name) })
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
