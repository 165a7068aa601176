package openapi

import (
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v3Renderer turns routes into the paths of one OpenAPI 3.0 document and
// collects the definitions they use.
type v3Renderer struct {
	gen   *generator
	roots []string
}

// ref returns a bare reference to t's definition and records it as a root
// of the document.
func (v *v3Renderer) ref(m model) *spec.Schema {
	if m.primitive != "" {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{m.primitive}}}
	}
	name := v.gen.refModel(m)
	v.roots = append(v.roots, name)
	return &spec.Schema{SchemaProps: spec.SchemaProps{Ref: v.gen.dialect.ref(name)}}
}

func (v *v3Renderer) paths(routes []route) *spec3.Paths {
	out := &spec3.Paths{Paths: map[string]*spec3.Path{}}
	for _, rt := range routes {
		p := &spec3.Path{}
		pathParams, opParams := hoist(rt)
		for _, prm := range pathParams {
			p.Parameters = append(p.Parameters, parameter3(prm))
		}
		for i, op := range rt.ops {
			op.query = opParams[i]
			o := v.operation(op)
			switch op.method {
			case "get":
				p.Get = o
			case "put":
				p.Put = o
			case "post":
				p.Post = o
			case "patch":
				p.Patch = o
			case "delete":
				p.Delete = o
			case "head":
				p.Head = o
			case "options":
				p.Options = o
			}
		}
		out.Paths[rt.path] = p
	}
	return out
}

func (v *v3Renderer) operation(op operation) *spec3.Operation {
	o := &spec3.Operation{}
	o.Tags = []string{op.tag}
	o.Description = op.desc
	o.OperationId = op.id
	// Query parameters are inline, not $ref: kubectl's field-validation
	// check reads the names of the PATCH operation's own parameters.
	for _, prm := range op.query {
		o.Parameters = append(o.Parameters, parameter3(prm))
	}
	if !op.body.isZero() {
		body := &spec3.RequestBody{}
		body.Required = op.method != "delete"
		body.Content = v.content(op.consumes, op.body)
		o.RequestBody = body
	}
	o.Responses = &spec3.Responses{}
	o.Responses.StatusCodeResponses = map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}}
	for _, r := range op.responses {
		o.Responses.StatusCodeResponses[r.code] = &spec3.Response{ResponseProps: spec3.ResponseProps{
			Description: r.desc, Content: v.content(op.produces, r.typ),
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

func (v *v3Renderer) content(mediaTypes []string, m model) map[string]*spec3.MediaType {
	out := make(map[string]*spec3.MediaType, len(mediaTypes))
	ref := v.ref(m)
	for _, mt := range mediaTypes {
		out[mt] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: ref}}
	}
	return out
}

func parameter3(p param) *spec3.Parameter {
	s := typed(p.typ, "")
	s.UniqueItems = true // as kube-apiserver publishes every parameter
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: p.name, In: p.in, Description: p.desc, Required: p.required, Schema: &s,
	}}
}

// v3Document assembles an OpenAPI 3.0 document.
func v3Document(title, version string, paths *spec3.Paths, schemas map[string]*spec.Schema) *spec3.OpenAPI {
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    &spec.Info{InfoProps: spec.InfoProps{Title: title, Version: version}},
		Paths:   paths,
		Components: &spec3.Components{
			Schemas: schemas,
			SecuritySchemes: spec3.SecuritySchemes{"BearerToken": &spec3.SecurityScheme{
				SecuritySchemeProps: spec3.SecuritySchemeProps{
					Type: "apiKey", Name: "authorization", In: "header",
					Description: "Bearer token authentication",
				},
			}},
		},
	}
}
