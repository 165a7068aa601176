package openapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	utilproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
)

var testNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newOpenAPIServer(t *testing.T) (*openapi.Service, *httptest.Server) {
	t.Helper()
	s, err := openapi.New(discoverytest.Resources(), openapi.Options{
		Version: "v1.37.0-setpoint", Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return s, srv
}

// fetch GETs path (no redirects followed) and returns the response and body.
func fetch(t *testing.T, srv *httptest.Server, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

type v3Index struct {
	Paths map[string]struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	} `json:"paths"`
}

func v3URLs(t *testing.T, srv *httptest.Server) map[string]string {
	t.Helper()
	resp, body := fetch(t, srv, "/openapi/v3", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi/v3: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var index v3Index
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range index.Paths {
		out[k] = v.ServerRelativeURL
	}
	return out
}

func TestV3DiscoveryAndCaching(t *testing.T) {
	_, srv := newOpenAPIServer(t)
	urls := v3URLs(t, srv)
	// The group-versions, and as kube-apiserver the documents of /api/,
	// /apis/, each group's /apis/<group>/ and /version/.
	if len(urls) != 8 {
		t.Fatalf("/openapi/v3 paths = %v", urls)
	}
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "api", "apis", "apis/apps", "apis/coordination.k8s.io", "version"} {
		if !strings.HasPrefix(urls[key], "/openapi/v3/"+key+"?hash=") {
			t.Errorf("%s: serverRelativeURL %q", key, urls[key])
		}
	}

	resp, body := fetch(t, srv, urls["apis/apps/v1"], nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", urls["apis/apps/v1"], resp.StatusCode)
	}
	hash := strings.TrimPrefix(urls["apis/apps/v1"], "/openapi/v3/apis/apps/v1?hash=")
	wantHeaders := map[string]string{
		"Content-Type":  "application/json",
		"Cache-Control": "public, immutable",
		"Expires":       testNow.AddDate(1, 0, 0).Format(http.TimeFormat),
		"Etag":          `"` + hash + `"`,
		"Vary":          "Accept",
	}
	for k, v := range wantHeaders {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !json.Valid(body) {
		t.Fatal("v3 document is not JSON")
	}

	// Stale hash: redirect to the current URL.
	resp, _ = fetch(t, srv, "/openapi/v3/apis/apps/v1?hash=0000", nil)
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != urls["apis/apps/v1"] {
		t.Errorf("stale hash: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// No hash: ETag only, and If-None-Match answers 304.
	resp, _ = fetch(t, srv, "/openapi/v3/apis/apps/v1", nil)
	if resp.Header.Get("Cache-Control") != "" || resp.Header.Get("Etag") != `"`+hash+`"` {
		t.Errorf("no hash: headers %v", resp.Header)
	}
	resp, _ = fetch(t, srv, "/openapi/v3/apis/apps/v1", http.Header{"If-None-Match": {`"` + hash + `"`}})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", resp.StatusCode)
	}
	for _, path := range []string{"/openapi/v3/apis/nope/v1", "/openapi/v3/apis/nope"} {
		if resp, _ := fetch(t, srv, path, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	if resp, _ := fetch(t, srv, "/openapi/v3/api/v1", http.Header{"Accept": {"application/yaml"}}); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("Accept: application/yaml: %d, want 406", resp.StatusCode)
	}
}

// v3Doc fetches and decodes one group-version document with kube-openapi's
// types, as client-go does.
func v3Doc(t *testing.T, srv *httptest.Server, key string) *spec3.OpenAPI {
	t.Helper()
	_, body := fetch(t, srv, v3URLs(t, srv)[key], nil)
	doc := &spec3.OpenAPI{}
	if err := json.Unmarshal(body, doc); err != nil {
		t.Fatal(err)
	}
	// gnostic and kube-openapi's proto models accept it too.
	gnostic, err := openapiv3.ParseDocument(body)
	if err != nil {
		t.Fatalf("%s: gnostic: %v", key, err)
	}
	if _, err := utilproto.NewOpenAPIV3Data(gnostic); err != nil {
		t.Fatalf("%s: proto models: %v", key, err)
	}
	return doc
}

func gvkExt(ext spec.Extensions) schema.GroupVersionKind {
	var m map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &m); err != nil {
		return schema.GroupVersionKind{}
	}
	return schema.GroupVersionKind{Group: m["group"], Version: m["version"], Kind: m["kind"]}
}

func paramNames(params []*spec3.Parameter) []string {
	var out []string
	for _, p := range params {
		out = append(out, p.Name)
	}
	return out
}

func TestV3Operations(t *testing.T) {
	_, srv := newOpenAPIServer(t)
	doc := v3Doc(t, srv, "apis/apps/v1")
	if doc.Version != "3.0.0" || doc.Info.Version != "1.37" { // major.minor, as kube-apiserver
		t.Errorf("openapi %q, info.version %q", doc.Version, doc.Info.Version)
	}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	scale := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	type want struct {
		path, method, action, id string
		gvk                      schema.GroupVersionKind
	}
	const ns = "/apis/apps/v1/namespaces/{namespace}/deployments"
	for _, w := range []want{
		{ns, "get", "list", "listAppsV1NamespacedDeployment", deployment},
		{ns, "post", "post", "createAppsV1NamespacedDeployment", deployment},
		{ns, "delete", "deletecollection", "deleteAppsV1CollectionNamespacedDeployment", deployment},
		{ns + "/{name}", "get", "get", "readAppsV1NamespacedDeployment", deployment},
		{ns + "/{name}", "put", "put", "replaceAppsV1NamespacedDeployment", deployment},
		{ns + "/{name}", "patch", "patch", "patchAppsV1NamespacedDeployment", deployment},
		{ns + "/{name}", "delete", "delete", "deleteAppsV1NamespacedDeployment", deployment},
		{ns + "/{name}/status", "patch", "patch", "patchAppsV1NamespacedDeploymentStatus", deployment},
		{ns + "/{name}/scale", "get", "get", "readAppsV1NamespacedDeploymentScale", scale},
		{ns + "/{name}/scale", "patch", "patch", "patchAppsV1NamespacedDeploymentScale", scale},
		{"/apis/apps/v1/deployments", "get", "list", "listAppsV1DeploymentForAllNamespaces", deployment},
		{"/apis/apps/v1/watch/namespaces/{namespace}/deployments", "get", "watchlist", "watchAppsV1NamespacedDeploymentList", deployment},
		{"/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}", "get", "watch", "watchAppsV1NamespacedDeployment", deployment},
		{"/apis/apps/v1/watch/deployments", "get", "watchlist", "watchAppsV1DeploymentListForAllNamespaces", deployment},
	} {
		path, ok := doc.Paths.Paths[w.path]
		if !ok {
			t.Errorf("no path %s", w.path)
			continue
		}
		op := map[string]*spec3.Operation{"get": path.Get, "post": path.Post, "put": path.Put,
			"patch": path.Patch, "delete": path.Delete}[w.method]
		if op == nil {
			t.Errorf("%s has no %s", w.path, w.method)
			continue
		}
		if op.OperationId != w.id || op.Extensions["x-kubernetes-action"] != w.action || gvkExt(op.Extensions) != w.gvk {
			t.Errorf("%s %s: id %s, action %v, gvk %v; want %s, %s, %v", w.method, w.path,
				op.OperationId, op.Extensions["x-kubernetes-action"], gvkExt(op.Extensions), w.id, w.action, w.gvk)
		}
	}

	item := doc.Paths.Paths[ns+"/{name}"]
	if got := paramNames(item.Parameters); !slices.Equal(got, []string{"name", "namespace", "pretty"}) {
		t.Errorf("item path parameters = %v", got)
	}
	if got := paramNames(item.Patch.Parameters); !slices.Equal(got, []string{"dryRun", "fieldManager", "fieldValidation", "force"}) {
		t.Errorf("patch parameters = %v", got)
	}
	var patchTypes []string
	for mt := range item.Patch.RequestBody.Content {
		patchTypes = append(patchTypes, mt)
	}
	slices.Sort(patchTypes)
	if want := []string{"application/apply-patch+yaml", "application/json-patch+json",
		"application/merge-patch+json", "application/strategic-merge-patch+json"}; !slices.Equal(patchTypes, want) {
		t.Errorf("patch content types = %v", patchTypes)
	}
	list := doc.Paths.Paths[ns].Get
	if got := paramNames(list.Parameters); !slices.Contains(got, "labelSelector") || !slices.Contains(got, "watch") {
		t.Errorf("list parameters = %v", got)
	}
	ok := list.Responses.StatusCodeResponses[200].Content["application/json"].Schema.Ref.String()
	if ok != "#/components/schemas/io.k8s.api.apps.v1.DeploymentList" {
		t.Errorf("list 200 schema = %s", ok)
	}
	for _, name := range []string{"io.k8s.api.core.v1.Node", "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.coordination.v1.Lease"} {
		if _, ok := doc.Components.Schemas[name]; ok {
			t.Errorf("apps/v1 document carries %s, which none of its operations reach", name)
		}
	}
	if _, ok := doc.Components.Schemas["io.k8s.api.autoscaling.v1.Scale"]; !ok {
		t.Error("apps/v1 document lacks the Scale schema")
	}
}

// TestFieldValidationAdvertised checks what kubectl 1.32 checks before it
// sends fieldValidation=Strict: every PATCH operation of every kind lists
// a fieldValidation parameter of its own.
func TestFieldValidationAdvertised(t *testing.T) {
	_, srv := newOpenAPIServer(t)
	for _, key := range []string{"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1"} {
		doc := v3Doc(t, srv, key)
		patches := 0
		for path, item := range doc.Paths.Paths {
			if item.Patch == nil {
				continue
			}
			patches++
			if gvkExt(item.Patch.Extensions).Empty() || !slices.Contains(paramNames(item.Patch.Parameters), "fieldValidation") {
				t.Errorf("%s: PATCH %s lacks the GVK extension or the fieldValidation parameter", key, path)
			}
		}
		if patches == 0 {
			t.Errorf("%s has no PATCH operation", key)
		}
	}
	core := v3Doc(t, srv, "api/v1")
	binding := core.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"]
	if binding == nil || binding.Post == nil ||
		gvkExt(binding.Post.Extensions) != (schema.GroupVersionKind{Version: "v1", Kind: "Binding"}) {
		t.Errorf("pods/binding POST = %+v", binding)
	}
	if nodes := core.Paths.Paths["/api/v1/nodes/{name}"]; nodes == nil || nodes.Patch == nil {
		t.Error("cluster-scoped nodes have no item path")
	}
}

func TestV2JSONAndProtobuf(t *testing.T) {
	_, srv := newOpenAPIServer(t)
	resp, jsonBody := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"application/json"}})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi/v2 JSON: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var swagger spec.Swagger
	if err := json.Unmarshal(jsonBody, &swagger); err != nil {
		t.Fatal(err)
	}
	if swagger.Swagger != "2.0" || len(swagger.Paths.Paths) == 0 {
		t.Fatalf("swagger %q with %d paths", swagger.Swagger, len(swagger.Paths.Paths))
	}
	containers := swagger.Definitions["io.k8s.api.core.v1.PodSpec"].Properties["containers"]
	if containers.Items.Schema.Ref.String() != "#/definitions/io.k8s.api.core.v1.Container" ||
		containers.Extensions["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("v2 PodSpec.containers = %+v", containers)
	}

	// client-go's Accept header for the protobuf form.
	resp, pb := fetch(t, srv, "/openapi/v2", http.Header{
		"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
	})
	if resp.StatusCode != http.StatusOK ||
		resp.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Fatalf("/openapi/v2 protobuf: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	fromProto := &openapiv2.Document{}
	if err := proto.Unmarshal(pb, fromProto); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapiv2.ParseDocument(jsonBody)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(fromProto, fromJSON) {
		t.Error("the protobuf document differs from the JSON one parsed by gnostic")
	}

	// kubectl parses it into proto models and looks kinds up by GVK.
	models, err := utilproto.NewOpenAPIData(fromProto)
	if err != nil {
		t.Fatal(err)
	}
	pod := models.LookupModel("io.k8s.api.core.v1.Pod")
	if pod == nil || !strings.Contains(pod.GetDescription(), "collection of containers") {
		t.Errorf("Pod model = %v", pod)
	}
	if !v2PatchSupports(fromProto, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Error("v2: PATCH of apps/v1 Deployment does not list fieldValidation")
	}

	etag := resp.Header.Get("Etag")
	resp, _ = fetch(t, srv, "/openapi/v2", http.Header{
		"Accept":        {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
		"If-None-Match": {etag},
	})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("protobuf If-None-Match: %d, want 304", resp.StatusCode)
	}
	if resp, _ := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"text/html"}}); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("Accept text/html: %d, want 406", resp.StatusCode)
	}
}

// v2PatchSupports finds the PATCH operation of gvk in a gnostic document and
// reports whether it lists the fieldValidation query parameter.
func v2PatchSupports(doc *openapiv2.Document, gvk schema.GroupVersionKind) bool {
	for _, path := range doc.GetPaths().GetPath() {
		patch := path.GetValue().GetPatch()
		matches := false
		for _, ext := range patch.GetVendorExtension() {
			if ext.GetName() == "x-kubernetes-group-version-kind" {
				y := ext.GetValue().GetYaml()
				matches = strings.Contains(y, "group: "+gvk.Group) && strings.Contains(y, "kind: "+gvk.Kind)
			}
		}
		if !matches {
			continue
		}
		for _, p := range patch.GetParameters() {
			if p.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == "fieldValidation" {
				return true
			}
		}
		return false
	}
	return false
}

func TestUpdate(t *testing.T) {
	s, srv := newOpenAPIServer(t)
	before := v3URLs(t, srv)
	_, v2Before := fetch(t, srv, "/openapi/v2", nil)

	if err := s.Update(discoverytest.Resources()[:3]); err != nil { // core kinds only
		t.Fatal(err)
	}
	after := v3URLs(t, srv)
	// api/v1 stays as it was: its DeleteOptions and WatchEvent name the
	// core group-version only.
	if len(after) != 4 || after["api/v1"] != before["api/v1"] || after["apis/apps"] != "" {
		t.Errorf("after Update: %v; want api/v1 unchanged, api, apis and version", after)
	}
	if resp, _ := fetch(t, srv, before["apis/apps/v1"], nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("old apps/v1 URL after Update: %d, want 404", resp.StatusCode)
	}
	_, v2After := fetch(t, srv, "/openapi/v2", nil)
	if len(v2After) >= len(v2Before) || strings.Contains(string(v2After), "/apis/apps/v1/") {
		t.Error("v2 document still describes apps/v1 after Update")
	}

	bad := discoverytest.Resources()
	bad[0].NewList = nil
	if err := s.Update(bad); err == nil {
		t.Fatal("Update accepted a resource without NewList")
	}
	if got := v3URLs(t, srv); len(got) != 4 {
		t.Errorf("a failed Update changed the documents: %v", got)
	}
}

func TestServedConcurrently(t *testing.T) {
	s, srv := newOpenAPIServer(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 3; i++ {
			if err := s.Update(discoverytest.Resources()); err != nil {
				t.Error(err)
			}
		}
	}()
	for i := 0; i < 3; i++ {
		if resp, _ := fetch(t, srv, "/openapi/v2", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /openapi/v2 during updates: %d", resp.StatusCode)
		}
		v3URLs(t, srv)
	}
	<-done
}
