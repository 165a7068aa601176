package openapi

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v2Renderer turns routes into the paths of the Swagger 2.0 document.
type v2Renderer struct {
	gen *generator
}

func (v *v2Renderer) ref(m model) *spec.Schema {
	if m.primitive != "" {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{m.primitive}}}
	}
	return &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v.gen.dialect.ref(v.gen.refModel(m))}}
}

func (v *v2Renderer) addPaths(paths *spec.Paths, routes []route) {
	for _, rt := range routes {
		item := spec.PathItem{}
		pathParams, opParams := hoist(rt)
		for _, prm := range pathParams {
			item.Parameters = append(item.Parameters, parameter2(prm))
		}
		for i, op := range rt.ops {
			op.query = opParams[i]
			o := v.operation(op)
			switch op.method {
			case "get":
				item.Get = o
			case "put":
				item.Put = o
			case "post":
				item.Post = o
			case "patch":
				item.Patch = o
			case "delete":
				item.Delete = o
			case "head":
				item.Head = o
			case "options":
				item.Options = o
			}
		}
		paths.Paths[rt.path] = item
	}
}

func (v *v2Renderer) operation(op operation) *spec.Operation {
	o := &spec.Operation{}
	o.Description = op.desc
	o.Consumes = op.consumes
	o.Produces = op.produces
	o.Schemes = []string{"https"}
	o.Tags = []string{op.tag}
	o.ID = op.id
	if !op.body.isZero() {
		body := spec.Parameter{ParamProps: spec.ParamProps{
			Name: "body", In: "body", Required: op.method != "delete", Schema: v.ref(op.body),
		}}
		o.Parameters = append(o.Parameters, body)
	}
	for _, prm := range op.query {
		o.Parameters = append(o.Parameters, parameter2(prm))
	}
	o.Responses = &spec.Responses{}
	o.Responses.StatusCodeResponses = map[int]spec.Response{
		401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}},
	}
	for _, r := range op.responses {
		o.Responses.StatusCodeResponses[r.code] = spec.Response{ResponseProps: spec.ResponseProps{
			Description: r.desc, Schema: v.ref(r.typ),
		}}
	}
	if op.action != "" {
		o.AddExtension(extAction, op.action)
	}
	if !op.gvk.Empty() {
		o.AddExtension(extGVK, map[string]any{"group": op.gvk.Group, "version": op.gvk.Version, "kind": op.gvk.Kind})
	}
	return o
}

func parameter2(p param) spec.Parameter {
	out := spec.Parameter{ParamProps: spec.ParamProps{
		Name: p.name, In: p.in, Description: p.desc, Required: p.required,
	}}
	out.Type = p.typ
	out.UniqueItems = true // as kube-apiserver publishes every parameter
	return out
}

// v2Document assembles the Swagger 2.0 document.
func v2Document(title, version string, paths *spec.Paths, defs map[string]*spec.Schema) *spec.Swagger {
	definitions := make(spec.Definitions, len(defs))
	for name, s := range defs {
		definitions[name] = *s
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: title, Version: version}},
		Paths:       paths,
		Definitions: definitions,
		SecurityDefinitions: spec.SecurityDefinitions{"BearerToken": &spec.SecurityScheme{
			SecuritySchemeProps: spec.SecuritySchemeProps{
				Type: "apiKey", Name: "authorization", In: "header",
				Description: "Bearer token authentication",
			},
		}},
		Security: []map[string][]string{{"BearerToken": {}}},
	}}
}
