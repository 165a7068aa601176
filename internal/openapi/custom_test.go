package openapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	utilproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

const (
	cronTabV1Model = "com.example.stable.v1.CronTab"
	cronTabV2Model = "com.example.stable.v2.CronTab"
	objectMeta     = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMeta       = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

func newCustomServer(t *testing.T) (*openapi.Service, *httptest.Server) {
	t.Helper()
	s, err := openapi.New(withCronTabs(t), openapi.Options{Version: "v1.37.0-setpoint"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

// danglingRefs returns the $refs of a JSON document that do not name one of
// its definitions (components.schemas in v3, definitions in v2), and fails
// on refs of another form.
func danglingRefs(t *testing.T, body []byte) []string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	defs, prefix := doc["definitions"], "#/definitions/"
	if c, ok := doc["components"].(map[string]any); ok {
		defs, prefix = c["schemas"], "#/components/schemas/"
	}
	names, _ := defs.(map[string]any)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if ref, ok := x.(string); ok && k == "$ref" {
					name, ok := strings.CutPrefix(ref, prefix)
					if _, defined := names[name]; !ok || !defined {
						out = append(out, ref)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// defGVK returns the only entry of a definition's
// x-kubernetes-group-version-kind list (empty unless there is exactly one).
func defGVK(ext spec.Extensions) schema.GroupVersionKind {
	var list []map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &list); err != nil || len(list) != 1 {
		return schema.GroupVersionKind{}
	}
	return schema.GroupVersionKind{Group: list[0]["group"], Version: list[0]["version"], Kind: list[0]["kind"]}
}

func TestCustomResourceV3(t *testing.T) {
	_, srv := newCustomServer(t)
	urls := v3URLs(t, srv)
	for _, key := range []string{"apis/stable.example.com/v1", "apis/stable.example.com/v2", "apis/apps/v1", "api/v1"} {
		if !strings.HasPrefix(urls[key], "/openapi/v3/"+key+"?hash=") {
			t.Errorf("/openapi/v3 lists %s as %q", key, urls[key])
		}
	}

	_, body := fetch(t, srv, urls["apis/stable.example.com/v1"], nil)
	if refs := danglingRefs(t, body); len(refs) > 0 {
		t.Errorf("v1 document has dangling refs: %v", refs)
	}
	doc := v3Doc(t, srv, "apis/stable.example.com/v1")
	schemas := doc.Components.Schemas
	for _, name := range []string{
		cronTabV1Model, cronTabV1Model + "List", objectMeta, listMeta,
		"io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
		"io.k8s.api.autoscaling.v1.Scale",
	} {
		if schemas[name] == nil {
			t.Errorf("v1 document lacks %s", name)
		}
	}
	if schemas[cronTabV2Model] != nil || schemas["io.k8s.api.apps.v1.Deployment"] != nil {
		t.Error("v1 document has models of other group-versions")
	}

	kind := schemaOf(t, schemas, cronTabV1Model)
	if got := defGVK(kind.Extensions); got != (schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}) {
		t.Errorf("CronTab GVK extension = %v", got)
	}
	spec1 := property(t, kind, "spec")
	if d := spec1.Properties["cronSpec"].Description; !strings.Contains(d, "cron schedule") {
		t.Errorf("spec.cronSpec description %q", d)
	}
	if img := spec1.Properties["image"]; !img.Nullable || !slices.Contains(spec1.Required, "image") {
		t.Error("v3 lost spec.image's nullable or required")
	}
	if refOf(property(t, kind, "metadata")) != "#/components/schemas/"+objectMeta {
		t.Errorf("metadata = %+v", kind.Properties["metadata"])
	}

	list := schemaOf(t, schemas, cronTabV1Model+"List")
	if got := defGVK(list.Extensions); got != (schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTabList"}) {
		t.Errorf("CronTabList GVK extension = %v", got)
	}
	items := property(t, list, "items")
	if !slices.Equal(list.Required, []string{"items"}) || items.Items == nil ||
		items.Items.Schema.Ref.String() != "#/components/schemas/"+cronTabV1Model {
		t.Errorf("CronTabList items = %+v, required %v", items, list.Required)
	}
	if refOf(property(t, list, "metadata")) != "#/components/schemas/"+listMeta ||
		property(t, list, "apiVersion").Type[0] != "string" || property(t, list, "kind").Type[0] != "string" {
		t.Errorf("CronTabList properties = %v", list.Properties)
	}

	checkCronTabPaths(t, doc)

	v2doc := v3Doc(t, srv, "apis/stable.example.com/v2")
	v2kind := schemaOf(t, v2doc.Components.Schemas, cronTabV2Model)
	if preserve, _ := v2kind.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); !preserve ||
		defGVK(v2kind.Extensions).Version != "v2" {
		t.Errorf("v2 CronTab = %+v", v2kind)
	}
	if v2doc.Components.Schemas[cronTabV1Model] != nil || v2doc.Components.Schemas[objectMeta] == nil {
		t.Error("v2 document: wrong model set")
	}
}

// checkCronTabPaths checks the operations of crontabs in stable.example.com/v1.
func checkCronTabPaths(t *testing.T, doc *spec3.OpenAPI) {
	t.Helper()
	const ns = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"
	crontab := schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}
	// kube-apiserver's CRD builder names the custom kind on the scale
	// operations too.
	scale := crontab
	type want struct {
		path, method, id, action string
		gvk                      schema.GroupVersionKind
	}
	for _, w := range []want{
		{ns, "get", "listStableExampleComV1NamespacedCronTab", "list", crontab},
		{ns, "post", "createStableExampleComV1NamespacedCronTab", "post", crontab},
		{ns, "delete", "deleteStableExampleComV1CollectionNamespacedCronTab", "deletecollection", crontab},
		{ns + "/{name}", "get", "readStableExampleComV1NamespacedCronTab", "get", crontab},
		{ns + "/{name}", "put", "replaceStableExampleComV1NamespacedCronTab", "put", crontab},
		{ns + "/{name}", "patch", "patchStableExampleComV1NamespacedCronTab", "patch", crontab},
		{ns + "/{name}", "delete", "deleteStableExampleComV1NamespacedCronTab", "delete", crontab},
		{ns + "/{name}/status", "get", "readStableExampleComV1NamespacedCronTabStatus", "get", crontab},
		{ns + "/{name}/status", "put", "replaceStableExampleComV1NamespacedCronTabStatus", "put", crontab},
		{ns + "/{name}/status", "patch", "patchStableExampleComV1NamespacedCronTabStatus", "patch", crontab},
		{ns + "/{name}/scale", "get", "readStableExampleComV1NamespacedCronTabScale", "get", scale},
		{ns + "/{name}/scale", "put", "replaceStableExampleComV1NamespacedCronTabScale", "put", scale},
		{ns + "/{name}/scale", "patch", "patchStableExampleComV1NamespacedCronTabScale", "patch", scale},
		{"/apis/stable.example.com/v1/crontabs", "get", "listStableExampleComV1CronTabForAllNamespaces", "list", crontab},
	} {
		path := doc.Paths.Paths[w.path]
		if path == nil {
			t.Errorf("no path %s", w.path)
			continue
		}
		op := map[string]*spec3.Operation{"get": path.Get, "post": path.Post, "put": path.Put,
			"patch": path.Patch, "delete": path.Delete}[w.method]
		if op == nil {
			t.Errorf("%s %s: no operation", w.method, w.path)
			continue
		}
		if op.OperationId != w.id || op.Extensions["x-kubernetes-action"] != w.action || gvkExt(op.Extensions) != w.gvk {
			t.Errorf("%s %s: id %s action %v gvk %v; want %+v", w.method, w.path, op.OperationId,
				op.Extensions["x-kubernetes-action"], gvkExt(op.Extensions), w)
		}
	}

	// As kube-apiserver's CRD builder: no deprecated watch paths, no
	// resource list; reads take resourceVersion, patches answer 200 only,
	// deletecollection takes the list options and no body.
	for _, p := range []string{"/apis/stable.example.com/v1/watch/crontabs", "/apis/stable.example.com/v1/"} {
		if doc.Paths.Paths[p] != nil {
			t.Errorf("custom resources publish %s", p)
		}
	}
	if doc.Info.Title != "Kubernetes CRD Swagger" || doc.Info.Version != "v0.1.0" {
		t.Errorf("info = %+v", doc.Info)
	}
	item := doc.Paths.Paths[ns+"/{name}"]
	if len(item.Get.Parameters) != 1 || item.Get.Parameters[0].Name != "resourceVersion" {
		t.Errorf("GET CronTab parameters = %v", item.Get.Parameters)
	}
	if _, ok := item.Patch.Responses.StatusCodeResponses[201]; ok {
		t.Error("PATCH CronTab documents a 201")
	}
	if dc := doc.Paths.Paths[ns].Delete; dc.RequestBody != nil || !slices.ContainsFunc(dc.Parameters, func(p *spec3.Parameter) bool { return p.Name == "watch" }) {
		t.Errorf("deletecollection: body %v, parameters %v", dc.RequestBody, dc.Parameters)
	}
	var patchTypes []string
	for mt := range item.Patch.RequestBody.Content {
		patchTypes = append(patchTypes, mt)
	}
	sort.Strings(patchTypes)
	if want := []string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"}; !slices.Equal(patchTypes, want) {
		t.Errorf("CronTab PATCH content types %v, want %v", patchTypes, want)
	}
	if ref := item.Get.Responses.StatusCodeResponses[200].Content["application/json"].Schema.Ref.String(); ref != "#/components/schemas/"+cronTabV1Model {
		t.Errorf("GET CronTab responds with %s", ref)
	}
	if _, proto := item.Get.Responses.StatusCodeResponses[200].Content["application/vnd.kubernetes.protobuf"]; proto {
		t.Error("a custom resource is advertised as protobuf")
	}
	scaleGet := doc.Paths.Paths[ns+"/{name}/scale"].Get.Responses.StatusCodeResponses[200]
	if ref := scaleGet.Content["application/json"].Schema.Ref.String(); ref != "#/components/schemas/io.k8s.api.autoscaling.v1.Scale" {
		t.Errorf("GET scale responds with %s", ref)
	}
	list := doc.Paths.Paths[ns].Get.Responses.StatusCodeResponses[200]
	if ref := list.Content["application/json"].Schema.Ref.String(); ref != "#/components/schemas/"+cronTabV1Model+"List" {
		t.Errorf("list responds with %s", ref)
	}
}

// TestCustomResourcesLeaveBuiltinDocuments: adding and removing custom
// resources changes no built-in group-version's document.
func TestCustomResourcesLeaveBuiltinDocuments(t *testing.T) {
	s, srv := newOpenAPIServer(t)
	before := v3URLs(t, srv)
	if err := s.Update(withCronTabs(t)); err != nil {
		t.Fatal(err)
	}
	with := v3URLs(t, srv)
	if len(with) != len(before)+2 {
		t.Errorf("with custom resources: %v", with)
	}
	for key, url := range before {
		if with[key] != url {
			t.Errorf("%s changed from %s to %s", key, url, with[key])
		}
	}
	if err := s.Update(discoverytest.Resources()); err != nil {
		t.Fatal(err)
	}
	if after := v3URLs(t, srv); len(after) != len(before) || after["apis/stable.example.com/v1"] != "" {
		t.Errorf("after removing the custom resources: %v", after)
	}
}

func TestCustomResourceV2(t *testing.T) {
	_, srv := newCustomServer(t)
	_, body := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"application/json"}})
	if refs := danglingRefs(t, body); len(refs) > 0 {
		t.Errorf("v2 document has dangling refs: %v", refs)
	}
	var swagger spec.Swagger
	if err := json.Unmarshal(body, &swagger); err != nil {
		t.Fatal(err)
	}
	kind, ok := swagger.Definitions[cronTabV1Model]
	if !ok {
		t.Fatalf("v2 lacks %s", cronTabV1Model)
	}
	if defGVK(kind.Extensions).Kind != "CronTab" {
		t.Errorf("v2 CronTab GVK = %v", kind.Extensions)
	}
	if ref := refOf(kind.Properties["metadata"]); ref != "#/definitions/"+objectMeta || len(kind.Properties["metadata"].AllOf) != 0 {
		t.Errorf("v2 metadata ref %q (an allOf of one $ref becomes the $ref)", ref)
	}
	spec1 := kind.Properties["spec"]
	image, timeout, extra := spec1.Properties["image"], spec1.Properties["timeout"], spec1.Properties["extra"]
	if image.Nullable || len(image.Type) != 0 || slices.Contains(spec1.Required, "image") || !slices.Contains(spec1.Required, "cronSpec") {
		t.Errorf("v2 nullable spec.image = %+v, required %v", image, spec1.Required)
	}
	if len(timeout.AnyOf) != 0 || timeout.Extensions["x-kubernetes-int-or-string"] != true {
		t.Errorf("v2 spec.timeout = %+v", timeout)
	}
	if len(extra.Properties) != 0 || len(extra.Type) != 0 {
		t.Errorf("v2 spec.extra (preserving unknown fields) = %+v", extra)
	}
	if replicas := spec1.Properties["replicas"]; replicas.Default != nil || replicas.Minimum == nil || *replicas.Minimum != 1 {
		t.Errorf("v2 spec.replicas = %+v", replicas)
	}
	list := swagger.Definitions[cronTabV1Model+"List"]
	if items := list.Properties["items"]; items.Items == nil || items.Items.Schema.Ref.String() != "#/definitions/"+cronTabV1Model {
		t.Errorf("v2 CronTabList = %+v", list)
	}
	// A root preserving unknown fields is published as a bare object.
	if v2 := swagger.Definitions[cronTabV2Model]; !v2.Type.Contains("object") || len(v2.Properties) != 0 || defGVK(v2.Extensions).Version != "v2" {
		t.Errorf("v2 document's CronTab v2 = %+v", v2)
	}
	patch := swagger.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"].Patch
	if patch == nil || slices.Contains(patch.Consumes, "application/strategic-merge-patch+json") || len(patch.Consumes) != 3 {
		t.Errorf("v2 CronTab PATCH = %+v", patch)
	}
	if !strings.Contains(string(body), `"/apis/stable.example.com/v2/namespaces/{namespace}/crontabs/{name}/scale"`) {
		t.Error("v2 lacks the scale path of CronTab v2")
	}

	resp, pb := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("v2 protobuf: %d %s", resp.StatusCode, pb)
	}
	fromProto := &openapiv2.Document{}
	if err := proto.Unmarshal(pb, fromProto); err != nil {
		t.Fatal(err)
	}
	models, err := utilproto.NewOpenAPIData(fromProto)
	if err != nil {
		t.Fatal(err)
	}
	kindModel, ok := models.LookupModel(cronTabV1Model).(*utilproto.Kind)
	if !ok {
		t.Fatalf("protobuf model of %s = %v", cronTabV1Model, models.LookupModel(cronTabV1Model))
	}
	specModel, ok := kindModel.Fields["spec"].(*utilproto.Kind)
	if !ok || !strings.Contains(specModel.Fields["cronSpec"].GetDescription(), "cron schedule") {
		t.Errorf("protobuf spec model = %v", kindModel.Fields["spec"])
	}
}

// TestCustomResourceTypeConverter builds the server-side-apply type
// converter over built-in and custom schemas and converts custom objects.
func TestCustomResourceTypeConverter(t *testing.T) {
	s, _ := newCustomServer(t)
	for _, name := range []string{cronTabV1Model, cronTabV1Model + "List", cronTabV2Model, "io.k8s.api.core.v1.Pod"} {
		schemaOf(t, s.Schemas(), name)
	}
	converter, err := managedfields.NewTypeConverter(s.Schemas(), false)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "every-5", "namespace": "default", "labels": map[string]any{"app": "cron"}},
		"spec": map[string]any{
			"cronSpec": "*/5 * * * *", "replicas": int64(2), "image": nil, "timeout": "30s",
			"extra": map[string]any{"anything": []any{int64(1), "x"}}, "tags": []any{"a", "b"},
		},
		"status": map[string]any{"replicas": int64(2), "labelSelector": "app=cron"},
	}}
	typed, err := converter.ObjectToTyped(obj)
	if err != nil {
		t.Fatalf("ObjectToTyped(CronTab v1): %v", err)
	}
	fields, err := typed.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fields.String(), ".spec.cronSpec") || !strings.Contains(fields.String(), ".metadata.labels.app") {
		t.Errorf("field set lacks spec.cronSpec or metadata.labels.app: %s", fields)
	}

	// The schema is what the converter checks against.
	bad := obj.DeepCopy()
	_ = unstructured.SetNestedField(bad.Object, "two", "spec", "replicas")
	if _, err := converter.ObjectToTyped(bad); err == nil {
		t.Error("ObjectToTyped accepted a string spec.replicas")
	}

	// v2 preserves unknown fields: anything goes.
	v2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v2", "kind": "CronTab",
		"metadata": map[string]any{"name": "x"}, "whatever": map[string]any{"deep": []any{"x"}},
	}}
	if _, err := converter.ObjectToTyped(v2); err != nil {
		t.Errorf("ObjectToTyped(CronTab v2): %v", err)
	}
}

func TestCustomResourceErrors(t *testing.T) {
	s, srv := newCustomServer(t)
	before := v3URLs(t, srv)

	for name, mutate := range map[string]func(r *registry.Resource){
		"no schema":     func(r *registry.Resource) { r.Schema = nil },
		"no model name": func(r *registry.Resource) { r.ModelName = "" },
		"unknown ref": func(r *registry.Resource) {
			r.Schema = mustSchema(t, `{"type":"object","properties":{"spec":{"$ref":"#/components/schemas/io.k8s.api.core.v1.PodSpec"}}}`)
		},
		"remote ref": func(r *registry.Resource) {
			r.Schema = mustSchema(t, `{"type":"object","properties":{"spec":{"$ref":"https://example.com/schema.json"}}}`)
		},
		"model of a Go type": func(r *registry.Resource) { r.ModelName = objectMeta },
		"model of another version": func(r *registry.Resource) {
			r.ModelName = cronTabV2Model
		},
	} {
		resources := withCronTabs(t)
		mutate(resources[len(resources)-2]) // CronTab v1
		err := s.Update(resources)
		if err == nil {
			t.Errorf("%s: Update succeeded", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	if after := v3URLs(t, srv); len(after) != len(before) || after["apis/stable.example.com/v1"] != before["apis/stable.example.com/v1"] {
		t.Errorf("failed Updates changed the documents: %v", after)
	}

	typed := discoverytest.Resources()
	typed[1].New = func() runtime.Object { return &unstructured.Unstructured{} }
	if _, err := openapi.New(typed, openapi.Options{}); err == nil || !strings.Contains(err.Error(), "Unstructured") {
		t.Errorf("a typed resource returning Unstructured: %v", err)
	}
}

// TestUpdateRebuildsChangedCustomResources: Update reuses the documents
// of unchanged group-versions, and rebuilds those whose custom resource
// got a new schema or other names.
func TestUpdateRebuildsChangedCustomResources(t *testing.T) {
	s, srv := newCustomServer(t)
	before := v3URLs(t, srv)

	resources := withCronTabs(t)
	v1 := resources[len(resources)-2]
	v1.Schema = mustSchema(t, strings.Replace(cronTabV1Schema, "CronTab runs a command on a schedule.", "CronTab, revised.", 1))
	if err := s.Update(resources); err != nil {
		t.Fatal(err)
	}
	after := v3URLs(t, srv)
	for key, url := range before {
		if changed := after[key] != url; changed != (key == "apis/stable.example.com/v1") {
			t.Errorf("%s: changed %t (%s, then %s)", key, changed, url, after[key])
		}
	}
	if d := schemaOf(t, v3Doc(t, srv, "apis/stable.example.com/v1").Components.Schemas, cronTabV1Model).Description; d != "CronTab, revised." {
		t.Errorf("v1 CronTab description after Update: %q", d)
	}
	if d := schemaOf(t, s.Schemas(), cronTabV1Model).Description; d != "CronTab, revised." {
		t.Errorf("Schemas() after Update: %q", d)
	}
	_, v2 := fetch(t, srv, "/openapi/v2", nil)
	if !strings.Contains(string(v2), "CronTab, revised.") {
		t.Error("v2 document still has the old CronTab schema")
	}

	// The same schema, cluster-scoped now: new paths.
	resources = withCronTabs(t)
	resources[len(resources)-2].Schema = v1.Schema
	resources[len(resources)-2].Namespaced = false
	if err := s.Update(resources); err != nil {
		t.Fatal(err)
	}
	doc := v3Doc(t, srv, "apis/stable.example.com/v1")
	if doc.Paths.Paths["/apis/stable.example.com/v1/crontabs/{name}"] == nil ||
		doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"] != nil {
		t.Error("v1 document kept the namespaced paths after CronTab v1 became cluster-scoped")
	}
}
