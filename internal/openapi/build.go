package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// title is the info.title of every document but those of custom
// resources' group-versions, which kube-apiserver's CRD builder titles
// customTitle with info.version customVersion.
const (
	title         = "Kubernetes"
	customTitle   = "Kubernetes CRD Swagger"
	customVersion = "v0.1.0"
)

// document is one encoded response body.
type document struct {
	body []byte
	// hash is the upper-case hex SHA-256 of body: the ETag, and for
	// OpenAPI v3 group-versions the ?hash= of their immutable URL.
	hash string
}

func newDocument(body []byte) document {
	sum := sha256.Sum256(body)
	return document{body: body, hash: strings.ToUpper(hex.EncodeToString(sum[:]))}
}

func encodeJSON(v any) (document, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return document{}, fmt.Errorf("openapi: encode %T: %w", v, err)
	}
	return newDocument(b), nil
}

// groupVersion is one served group-version with its kinds, in input order.
type groupVersion struct {
	gv    schema.GroupVersion
	kinds []kindInfo
}

// plan is a validated resource set, ready to render.
type plan struct {
	gvs []*groupVersion
	// kinds maps the Go type of every top-level kind to its GVKs.
	kinds map[reflect.Type][]schema.GroupVersionKind
	// customs are the custom resources among gvs' kinds, in input order;
	// their model names are distinct. customModels maps the kind and list
	// model names of each to it.
	customs      []kindInfo
	customModels map[string]kindInfo
	// typedKey describes kinds, for the reuse of documents (reuse.go).
	typedKey string
}

var unstructuredType = reflect.TypeFor[unstructured.Unstructured]()

// newPlan validates resources and resolves their models.
func newPlan(resources []*registry.Resource) (*plan, error) {
	p := &plan{kinds: map[reflect.Type][]schema.GroupVersionKind{}, customModels: map[string]kindInfo{}}
	byGV := map[schema.GroupVersion]*groupVersion{}
	// claimed maps each GVK to the Go type or the custom model name
	// serving it.
	claimed := map[schema.GroupVersionKind]any{}
	claim := func(by any, gvk schema.GroupVersionKind) error {
		if prev, ok := claimed[gvk]; ok {
			if prev != by {
				return fmt.Errorf("openapi: %v is served as both %v and %v", gvk, prev, by)
			}
			return nil
		}
		claimed[gvk] = by
		if t, typed := by.(reflect.Type); typed {
			p.kinds[t] = append(p.kinds[t], gvk)
		}
		return nil
	}
	models := map[string]schema.GroupVersionResource{}
	for i, r := range resources {
		k, err := checkResource(i, r)
		if err != nil {
			return nil, err
		}
		objKey, listKey := any(k.obj.t), any(k.objList.t)
		if r.Unstructured {
			for _, name := range []string{k.obj.name, k.objList.name} {
				if prev, dup := models[name]; dup {
					return nil, fmt.Errorf("openapi: resources %s and %s both publish the model %s", prev, r.GVR(), name)
				}
				models[name] = r.GVR()
			}
			objKey, listKey = k.obj.name, k.objList.name
			p.customs = append(p.customs, k)
			p.customModels[k.obj.name], p.customModels[k.objList.name] = k, k
		}
		if err := claim(objKey, r.GVK()); err != nil {
			return nil, err
		}
		if k.hasList() {
			if err := claim(listKey, r.GroupVersion().WithKind(r.ListKind)); err != nil {
				return nil, err
			}
		}
		g := byGV[r.GroupVersion()]
		if g == nil {
			g = &groupVersion{gv: r.GroupVersion()}
			byGV[g.gv] = g
			p.gvs = append(p.gvs, g)
		}
		g.kinds = append(g.kinds, k)
	}
	if err := p.claimSharedKinds(claim); err != nil {
		return nil, err
	}
	p.typedKey = typedKey(p)
	return p, nil
}

// checkResource validates one resource descriptor and resolves its models.
func checkResource(i int, r *registry.Resource) (kindInfo, error) {
	if r == nil || r.New == nil || r.Kind == "" || r.Resource == "" {
		return kindInfo{}, fmt.Errorf("openapi: resource %d: resource, kind and New are required", i)
	}
	if (r.NewList == nil || r.ListKind == "") && (r.Virtual == nil || r.Virtual.List != nil) {
		return kindInfo{}, fmt.Errorf("openapi: resource %s: list kind and NewList are required", r.GVR())
	}
	if r.Unstructured {
		if r.Schema == nil || r.ModelName == "" {
			return kindInfo{}, fmt.Errorf("openapi: custom resource %s: Schema and ModelName are required", r.GVR())
		}
		return resolveKind(r), nil
	}
	k := resolveKind(r)
	if k.obj.t.Kind() != reflect.Struct || (k.hasList() && k.objList.t.Kind() != reflect.Struct) || k.obj.t == unstructuredType {
		return kindInfo{}, fmt.Errorf("openapi: resource %s: New and NewList must return typed Go structs (custom resources set Unstructured, Schema and ModelName)", r.GVR())
	}
	return k, nil
}

// unlisted reports whether r is a resource not stored that serves no list.
func unlisted(r *registry.Resource) bool {
	return r.Virtual != nil && r.Virtual.List == nil
}

// kindClaim is one Go type served as one GVK.
type kindClaim struct {
	t   reflect.Type
	gvk schema.GroupVersionKind
}

// claimSharedKinds adds the GVKs of the kinds the operations share:
// Status, the subresource kinds, and DeleteOptions and WatchEvent in
// every served group-version (and the core one), as Kubernetes lists them.
//
// Group-versions of custom resources only are not listed, as Kubernetes
// does not list them: so the documents of the built-in group-versions do
// not change when custom resources come and go.
func (p *plan) claimSharedKinds(claim func(any, schema.GroupVersionKind) error) error {
	gvs := []schema.GroupVersion{{Version: "v1"}}
	for _, g := range p.gvs {
		if g.gv != gvs[0] && g.hasTyped() {
			gvs = append(gvs, g.gv)
		}
	}
	claims := []kindClaim{{statusType, schema.GroupVersionKind{Version: "v1", Kind: "Status"}}}
	for _, gv := range gvs {
		claims = append(claims,
			kindClaim{deleteOptionsType, gv.WithKind("DeleteOptions")},
			kindClaim{watchEventType, gv.WithKind("WatchEvent")})
	}
	for _, g := range p.gvs {
		for _, k := range g.kinds {
			if k.r.Scale != nil {
				claims = append(claims, kindClaim{scaleType, schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}})
			}
			for _, sr := range k.r.Subresources {
				if sr.Action != nil {
					claims = append(claims, kindClaim{deref(reflect.TypeOf(sr.Action.NewBody())), sr.Kind})
				}
			}
		}
	}
	for _, c := range claims {
		if err := claim(c.t, c.gvk); err != nil {
			return err
		}
	}
	return nil
}

// hasTyped reports whether g serves a kind that is not a custom resource.
func (g *groupVersion) hasTyped() bool {
	for _, k := range g.kinds {
		if !k.r.Unstructured {
			return true
		}
	}
	return false
}

// routes returns all routes of one group-version (the resource list only
// for group-versions of typed kinds: kube-apiserver publishes none for
// custom resources).
func (g *groupVersion) routes() []route {
	var out []route
	if g.hasTyped() {
		out = append(out, resourceListRoute(g.gv))
	}
	for _, k := range g.kinds {
		out = append(out, k.routes()...)
	}
	return out
}

// renderV3 renders one OpenAPI 3.0 document per group-version. The
// definitions (Schemas) are derived now; the documents are encoded on
// first use (v3Set.ready), reusing those of prev (nil for none) whose
// inputs did not change, when prev was encoded.
func (p *plan) renderV3(version string, prev *v3Set) (*v3Set, error) {
	gen := newGenerator(openapi3, p.kinds)
	gen.defineCustoms(p.customs)
	var pending []pendingDoc
	for _, g := range p.gvs {
		r := &v3Renderer{gen: gen}
		paths := r.paths(g.routes())
		if gen.err != nil {
			return nil, gen.err
		}
		defs := perDocumentKinds(gen.closure(r.roots), g)
		d := pendingDoc{path: gvPath(g.gv), key: p.docKey(version, g, defs)}
		if doc, ok := prev.reusable(d.key); ok {
			d.doc, d.reused = doc, true
		} else {
			t, v := title, version
			if !g.hasTyped() {
				t, v = customTitle, customVersion
			}
			d.value = v3Document(t, v, paths, defs)
		}
		pending = append(pending, d)
	}
	for path, rt := range p.discoveryRoutes() {
		r := &v3Renderer{gen: gen}
		paths := r.paths([]route{rt})
		pending = append(pending, pendingDoc{path: path, value: v3Document(title, version, paths, gen.closure(r.roots))})
	}
	if gen.err != nil {
		return nil, gen.err
	}
	return newV3Set(gen.defs, pending), nil
}

// discoveryRoutes are the documents of kube-apiserver's OpenAPI v3 that
// are no group-version, by path: "api", "apis", "apis/<group>" for each
// group serving a typed kind, and "version".
func (p *plan) discoveryRoutes() map[string]route {
	out := map[string]route{"api": coreVersionsRoute(), "apis": apiVersionsRoute(), "version": versionRoute()}
	for _, g := range p.gvs {
		if g.gv.Group != "" && g.hasTyped() {
			out["apis/"+g.gv.Group] = groupRoute(g.gv.Group)
		}
	}
	return out
}

// perDocumentKinds narrows, in one group-version's OpenAPI v3 document,
// the group-version-kinds of DeleteOptions and WatchEvent to the core
// group-version and the document's own (for a group-version of typed
// kinds), as kube-apiserver publishes them. defs is not modified: the
// result is a copy when it differs.
func perDocumentKinds(defs map[string]*spec.Schema, g *groupVersion) map[string]*spec.Schema {
	gvs := []schema.GroupVersion{{Version: "v1"}}
	if g.gv.Group != "" && g.hasTyped() {
		gvs = append(gvs, g.gv)
	}
	out := defs
	for _, t := range []reflect.Type{deleteOptionsType, watchEventType} {
		name := ModelName(t)
		s, ok := defs[name]
		if !ok {
			continue
		}
		ext := make([]any, 0, len(gvs))
		for _, gv := range gvs {
			ext = append(ext, map[string]any{"group": gv.Group, "version": gv.Version, "kind": t.Name()})
		}
		c := *s
		c.Extensions = make(spec.Extensions, len(s.Extensions))
		for k, v := range s.Extensions {
			c.Extensions[k] = v
		}
		c.Extensions[extGVK] = ext
		if &out == &defs || len(out) == len(defs) && out[name] == defs[name] {
			copied := make(map[string]*spec.Schema, len(defs))
			for k, v := range out {
				copied[k] = v
			}
			out = copied
		}
		out[name] = &c
	}
	return out
}

// discoveryV3 is the body of /openapi/v3.
type discoveryV3 struct {
	Paths map[string]discoveryV3Entry `json:"paths"`
}

type discoveryV3Entry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// renderV2 renders the Swagger 2.0 document of all group-versions, with
// the aggregated servers' paths and definitions (aggregated.go), as JSON.
func (p *plan) renderV2(version string, agg []Aggregated) (document, error) {
	gen := newGenerator(swagger2, p.kinds)
	gen.defineCustoms(p.customs)
	r := &v2Renderer{gen: gen}
	paths := &spec.Paths{Paths: map[string]spec.PathItem{}}
	for _, g := range p.gvs {
		r.addPaths(paths, g.routes())
	}
	for _, rt := range p.discoveryRoutes() {
		r.addPaths(paths, []route{rt})
	}
	if gen.err != nil {
		return document{}, gen.err
	}
	defs := gen.defs
	if hasV2(agg) {
		defs = maps.Clone(defs)
		addAggregatedV2(paths, defs, agg)
	}
	return encodeJSON(v2Document(title, version, paths, defs))
}

// toProtobuf converts the Swagger 2.0 JSON to the gnostic protobuf form
// clients ask for with application/com.github.proto-openapi.spec.v2@v1.0+protobuf.
func toProtobuf(v2JSON []byte) (document, error) {
	doc, err := openapiv2.ParseDocument(v2JSON)
	if err != nil {
		return document{}, fmt.Errorf("openapi: parse v2 for protobuf: %w", err)
	}
	b, err := proto.Marshal(doc)
	if err != nil {
		return document{}, fmt.Errorf("openapi: marshal v2 protobuf: %w", err)
	}
	return newDocument(b), nil
}
