package openapi

import (
	"reflect"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// route is one URL path with its operations, independent of the OpenAPI
// version that will render it.
type route struct {
	path string
	// params are the path-level parameters ({name}, {namespace}, pretty).
	params []param
	ops    []operation
}

// operation is one HTTP method on a route.
type operation struct {
	method string // get, put, post, patch, delete
	action string // x-kubernetes-action
	id     string
	desc   string
	tag    string
	gvk    schema.GroupVersionKind
	query  []param
	// body is the request body's model, the zero model for none.
	body model
	// consumes lists the request media types (patch types for patch).
	consumes []string
	// produces lists the response media types.
	produces  []string
	responses []response
}

type response struct {
	code int
	desc string
	typ  model
}

// model is the schema of a request or response body: a Go type whose
// definition is derived by reflection, or (t nil) a custom resource's
// published model, named name. The zero model means no body.
type model struct {
	t    reflect.Type
	name string
	// primitive is a JSON schema type ("string") for bodies that are not
	// objects (the text of pods/log).
	primitive string
}

func typeModel(t reflect.Type) model { return model{t: t} }

func (m model) isZero() bool { return m.t == nil && m.name == "" && m.primitive == "" }

// stringModel is a plain string body.
var stringModel = model{primitive: "string"}

// pathParam is the {path} of proxy subresources.
var pathParam = param{name: "path", in: "path", typ: "string", required: true, desc: "path to the resource"}

// Media types served and accepted by the API server.
var (
	objectMediaTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	watchMediaTypes  = []string{
		"application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
		"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch",
	}
	patchMediaTypes = []string{
		"application/json-patch+json", "application/merge-patch+json",
		"application/strategic-merge-patch+json", "application/apply-patch+yaml",
	}
	anyMediaType = []string{"*/*"}

	// Custom resources are served as JSON and YAML only, and take no
	// strategic merge patch (as Kubernetes serves them).
	customMediaTypes      = []string{"application/json", "application/yaml"}
	customWatchMediaTypes = []string{"application/json", "application/yaml", "application/json;stream=watch"}
	customPatchMediaTypes = []string{
		"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml",
	}
)

// Go types of the meta kinds every group-version's operations use.
var (
	statusType        = reflect.TypeFor[metav1.Status]()
	deleteOptionsType = reflect.TypeFor[metav1.DeleteOptions]()
	watchEventType    = reflect.TypeFor[metav1.WatchEvent]()
	patchType         = reflect.TypeFor[metav1.Patch]()
	resourceListType  = reflect.TypeFor[metav1.APIResourceList]()
	apiVersionsType   = reflect.TypeFor[metav1.APIVersions]()
	apiGroupListType  = reflect.TypeFor[metav1.APIGroupList]()
	apiGroupType      = reflect.TypeFor[metav1.APIGroup]()
	versionInfoType   = reflect.TypeFor[version.Info]()
	scaleType         = reflect.TypeFor[autoscalingv1.Scale]()
)

// kindInfo is one served resource with its models resolved: Go types for
// typed resources; for custom resources (r.Unstructured) the models
// r.ModelName and r.ModelName+"List".
type kindInfo struct {
	r        *registry.Resource
	obj      model
	objList  model
	gvPrefix string // e.g. "AppsV1"
}

// resolveKind keeps a copy of r, so that documents built later (the lazy
// Swagger 2.0 form) do not depend on the caller leaving r unchanged.
func resolveKind(r *registry.Resource) kindInfo {
	r = ptrTo(*r)
	k := kindInfo{r: r, gvPrefix: gvPrefix(r.GroupVersion())}
	if r.Unstructured {
		k.obj, k.objList = model{name: r.ModelName}, model{name: listModelName(r.ModelName)}
	} else {
		k.obj = typeModel(deref(reflect.TypeOf(r.New())))
		if r.NewList != nil {
			k.objList = typeModel(deref(reflect.TypeOf(r.NewList())))
		}
	}
	return k
}

// hasList reports whether the kind has a list model (a virtual resource
// served by create only has none).
func (k kindInfo) hasList() bool { return !k.objList.isZero() }

// routes returns every route of one resource, in a fixed order.
func (k kindInfo) routes() []route {
	r := k.r
	prefix := "/" + gvPath(r.GroupVersion())
	ns, scope := "", ""
	base := []param{}
	if r.Namespaced {
		ns, scope = "/namespaces/{namespace}", "Namespaced"
		base = append(base, namespaceParam)
	}
	collection := prefix + ns + "/" + r.Resource
	item := collection + "/{name}"
	itemParams := with([]param{nameParam(r.Kind)}, base...)
	if r.Virtual != nil {
		return k.virtualRoutes(collection, item, base, itemParams, scope)
	}
	collectionOps := []operation{
		k.list("list"+k.gvPrefix+scope+r.Kind, "list or watch objects of kind "+r.Kind),
		k.create(),
	}
	if !r.NoDeleteCollection {
		collectionOps = append(collectionOps, k.deleteCollection(scope))
	}
	out := []route{
		{path: collection, params: with(base, prettyParam), ops: collectionOps},
		{path: item, params: with(itemParams, prettyParam), ops: []operation{
			k.read("read"+k.gvPrefix+scope+r.Kind, "read the specified "+r.Kind, k.obj),
			k.replace("replace"+k.gvPrefix+scope+r.Kind, "replace the specified "+r.Kind, k.obj),
			k.patch("patch"+k.gvPrefix+scope+r.Kind, "partially update the specified "+r.Kind, r.GVK(), k.obj),
			k.delete(scope),
		}},
		{path: prefix + "/watch" + ns + "/" + r.Resource, params: with(base, prettyParam), ops: []operation{
			k.watch("watch"+k.gvPrefix+scope+r.Kind+"List", "watchlist",
				"watch individual changes to a list of "+r.Kind+"; deprecated: use the 'watch' parameter with a list operation instead"),
		}},
		{path: prefix + "/watch" + ns + "/" + r.Resource + "/{name}", params: with(itemParams, prettyParam), ops: []operation{
			k.watch("watch"+k.gvPrefix+scope+r.Kind, "watch",
				"watch changes to an object of kind "+r.Kind+"; deprecated: use the 'watch' parameter with a list operation filtered to one item by 'fieldSelector' instead"),
		}},
	}
	if r.Namespaced {
		out = append(out,
			route{path: prefix + "/" + r.Resource, params: []param{prettyParam}, ops: []operation{
				k.list("list"+k.gvPrefix+r.Kind+"ForAllNamespaces", "list or watch objects of kind "+r.Kind+" in all namespaces"),
			}},
			route{path: prefix + "/watch/" + r.Resource, params: []param{prettyParam}, ops: []operation{
				k.watch("watch"+k.gvPrefix+r.Kind+"ListForAllNamespaces", "watchlist",
					"watch individual changes to a list of "+r.Kind+" in all namespaces; deprecated: use the 'watch' parameter with a list operation instead"),
			}})
	}
	if r.Unstructured {
		// kube-apiserver's CRD builder publishes no deprecated /watch/
		// paths for custom resources.
		kept := out[:0]
		for _, rt := range out {
			if !strings.Contains(rt.path, "/watch/") {
				kept = append(kept, rt)
			}
		}
		out = kept
	}
	return append(out, k.subresourceRoutes(item, itemParams, scope)...)
}

// virtualRoutes returns the routes of a resource whose objects are not
// stored (registry.Virtual): the verbs it serves only, as kube-apiserver
// publishes them (the reviews: create; componentstatuses: list and read).
func (k kindInfo) virtualRoutes(collection, item string, base, itemParams []param, scope string) []route {
	r, v := k.r, k.r.Virtual
	var ops []operation
	if v.List != nil {
		ops = append(ops, k.list("list"+k.gvPrefix+scope+r.Kind, "list objects of kind "+r.Kind))
	}
	if v.Create != nil {
		ops = append(ops, k.create())
	}
	var out []route
	if len(ops) > 0 {
		out = append(out, route{path: collection, params: with(base, prettyParam), ops: ops})
	}
	if v.Get != nil {
		out = append(out, route{path: item, params: with(itemParams, prettyParam), ops: []operation{
			k.read("read"+k.gvPrefix+scope+r.Kind, "read the specified "+r.Kind, k.obj),
		}})
	}
	return out
}

// subresourceRoutes returns the routes of the scale, status and the kind's
// own subresources (subresource_routes.go), by subresource name.
func (k kindInfo) subresourceRoutes(item string, itemParams []param, scope string) []route {
	r := k.r
	var out []route
	for _, sr := range r.Subresources {
		out = append(out, k.kindSubresourceRoutes(sr, item, itemParams, scope)...)
	}
	if r.Scale != nil {
		gvk := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
		name := k.gvPrefix + scope + r.Kind + "Scale"
		scale := typeModel(scaleType)
		read := k.read("read"+name, "read scale of the specified "+r.Kind, scale)
		replace := k.replace("replace"+name, "replace scale of the specified "+r.Kind, scale)
		if r.Unstructured {
			gvk = r.GVK() // kube-apiserver's CRD builder names the custom kind
		}
		read.gvk, replace.gvk = gvk, gvk
		out = append(out, route{path: item + "/scale", params: with(itemParams, prettyParam), ops: []operation{
			read, replace, k.patch("patch"+name, "partially update scale of the specified "+r.Kind, gvk, scale),
		}})
	}
	if r.Status != nil {
		name := k.gvPrefix + scope + r.Kind + "Status"
		out = append(out, route{path: item + "/status", params: with(itemParams, prettyParam), ops: []operation{
			k.read("read"+name, "read status of the specified "+r.Kind, k.obj),
			k.replace("replace"+name, "replace status of the specified "+r.Kind, k.obj),
			k.patch("patch"+name, "partially update status of the specified "+r.Kind, r.GVK(), k.obj),
		}})
	}
	slices.SortStableFunc(out, func(a, b route) int { return strings.Compare(a.path, b.path) })
	return out
}

// Media types of one kind's operations: what its objects are served as,
// what its lists and watches are served as, what its writes accept, and
// the patch types it takes.
func (k kindInfo) objectTypes() []string {
	if k.r.Unstructured {
		return customMediaTypes
	}
	return objectMediaTypes
}

func (k kindInfo) watchTypes() []string {
	if k.r.Unstructured {
		return customWatchMediaTypes
	}
	return watchMediaTypes
}

func (k kindInfo) bodyTypes() []string {
	if k.r.Unstructured {
		return customMediaTypes
	}
	return anyMediaType
}

func (k kindInfo) patchTypes() []string {
	if k.r.Unstructured {
		return customPatchMediaTypes
	}
	return patchMediaTypes
}

// op is an operation of the kind. Custom resources' operations are
// published as kube-apiserver's CRD builder publishes them: consuming JSON
// and YAML even without a body.
func (k kindInfo) op(method, action, id, desc string) operation {
	op := operation{
		method: method, action: action, id: id, desc: desc,
		tag: gvTag(k.r.GroupVersion()), gvk: k.r.GVK(), produces: k.objectTypes(), consumes: anyMediaType,
	}
	if k.r.Unstructured {
		op.consumes = customMediaTypes
	}
	return op
}

// list produces the watch streams too, but for custom resources (whose
// list operations kube-apiserver publishes with JSON and YAML only).
func (k kindInfo) list(id, desc string) operation {
	op := k.op("get", "list", id, desc)
	op.query = listParams
	op.produces = k.watchTypes()
	if k.r.Unstructured {
		op.produces = customMediaTypes
	}
	op.responses = []response{{200, "OK", k.objList}}
	return op
}

func (k kindInfo) watch(id, action, desc string) operation {
	op := k.op("get", action, id, desc)
	op.query = listParams
	op.produces = k.watchTypes()
	op.responses = []response{{200, "OK", typeModel(watchEventType)}}
	return op
}

func (k kindInfo) create() operation {
	op := k.op("post", "post", "create"+k.gvPrefix+scopeOf(k.r)+k.r.Kind, "create a "+k.r.Kind)
	op.query = writeParams
	op.body, op.consumes = k.obj, k.bodyTypes()
	op.responses = okCreatedAccepted(k.obj)
	return op
}

// read takes a resourceVersion parameter for custom resources, as
// kube-apiserver's CRD builder publishes it.
func (k kindInfo) read(id, desc string, m model) operation {
	op := k.op("get", "get", id, desc)
	if k.r.Unstructured {
		op.query = []param{resourceVersion}
	}
	op.responses = []response{{200, "OK", m}}
	return op
}

func (k kindInfo) replace(id, desc string, m model) operation {
	op := k.op("put", "put", id, desc)
	op.query = writeParams
	op.body, op.consumes = m, k.bodyTypes()
	op.responses = []response{{200, "OK", m}, {201, "Created", m}}
	return op
}

func (k kindInfo) patch(id, desc string, gvk schema.GroupVersionKind, m model) operation {
	op := k.op("patch", "patch", id, desc)
	op.gvk = gvk
	op.query = patchParams
	op.body, op.consumes = typeModel(patchType), k.patchTypes()
	op.responses = []response{{200, "OK", m}, {201, "Created", m}}
	if k.r.Unstructured {
		op.responses = op.responses[:1] // a custom resource's patch answers 200 only
	}
	return op
}

// delete answers with the object for typed kinds that return the deleted
// object (registry.Resource.ReturnDeletedObject), else with a Status, as
// Kubernetes publishes them.
func (k kindInfo) delete(scope string) operation {
	op := k.op("delete", "delete", "delete"+k.gvPrefix+scope+k.r.Kind, "delete a "+k.r.Kind)
	op.query = deleteParams
	op.body, op.consumes = typeModel(deleteOptionsType), k.bodyTypes()
	answer := typeModel(statusType)
	if k.r.ReturnDeletedObject && !k.r.Unstructured {
		answer = k.obj
	}
	op.responses = []response{{200, "OK", answer}, {202, "Accepted", answer}}
	return op
}

func (k kindInfo) deleteCollection(scope string) operation {
	op := k.op("delete", "deletecollection", "delete"+k.gvPrefix+"Collection"+scope+k.r.Kind,
		"delete collection of "+k.r.Kind)
	op.query = deleteCollectionParams
	op.body, op.consumes = typeModel(deleteOptionsType), k.bodyTypes()
	if k.r.Unstructured {
		// As kube-apiserver's CRD builder: the list options, no body.
		op.query, op.body, op.consumes = listParams, model{}, customMediaTypes
	}
	op.responses = []response{{200, "OK", typeModel(statusType)}}
	return op
}

// with returns a new slice of ps followed by more.
func with(ps []param, more ...param) []param {
	out := make([]param, 0, len(ps)+len(more))
	return append(append(out, ps...), more...)
}

func okCreatedAccepted(m model) []response {
	return []response{{200, "OK", m}, {201, "Created", m}, {202, "Accepted", m}}
}

func scopeOf(r *registry.Resource) string {
	if r.Namespaced {
		return "Namespaced"
	}
	return ""
}

// resourceListRoute is GET /<gv path>/, the group-version's resource list.
func resourceListRoute(gv schema.GroupVersion) route {
	return discoveryRoute("/"+gvPath(gv)+"/", "get"+gvPrefix(gv)+"APIResources", "get available resources",
		gvTag(gv), resourceListType)
}

// discoveryRoute is the GET of one discovery document.
func discoveryRoute(path, id, desc, tag string, t reflect.Type) route {
	return route{path: path, ops: []operation{{
		method: "get", id: id, desc: desc, tag: tag,
		produces: objectMediaTypes, consumes: objectMediaTypes,
		responses: []response{{200, "OK", typeModel(t)}},
	}}}
}

// Routes of the documents that are no group-version: /api/, /apis/,
// /apis/<group>/ and /version/.
func coreVersionsRoute() route {
	return discoveryRoute("/api/", "getCoreAPIVersions", "get available API versions", "core", apiVersionsType)
}

func apiVersionsRoute() route {
	return discoveryRoute("/apis/", "getAPIVersions", "get available API versions", "apis", apiGroupListType)
}

func groupRoute(group string) route {
	return discoveryRoute("/apis/"+group+"/", "get"+groupCamel(group)+"APIGroup", "get information of a group",
		lowerFirst(groupCamel(group)), apiGroupType)
}

func versionRoute() route {
	json := []string{"application/json"}
	return route{path: "/version/", ops: []operation{{
		method: "get", id: "getCodeVersion", desc: "get the version information for this server", tag: "version",
		produces: json, consumes: json, responses: []response{{200, "OK", typeModel(versionInfoType)}},
	}}}
}

func ptrTo[T any](v T) *T { return &v }
