package discovery_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Accept header client-go's discovery client sends to /api and /apis.
const clientGoAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

func newServer(t *testing.T, resources []*registry.Resource) (*discovery.Handler, *httptest.Server) {
	t.Helper()
	h, err := discovery.New(resources)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return h, srv
}

// get fetches path with the given headers and returns the response with
// its body read.
func get(t *testing.T, srv *httptest.Server, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
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

// getJSON fetches path, requires 200 and the content type, and decodes.
func getJSON(t *testing.T, srv *httptest.Server, path, accept, wantType string, into any) *http.Response {
	t.Helper()
	resp, body := get(t, srv, path, http.Header{"Accept": {accept}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	if got := resp.Header.Get("Content-Type"); got != wantType {
		t.Fatalf("GET %s: Content-Type %q, want %q", path, got, wantType)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return resp
}

func TestLegacyRootDocuments(t *testing.T) {
	_, srv := newServer(t, discoverytest.Resources())

	var versions metav1.APIVersions
	getJSON(t, srv, "/api", "application/json", "application/json", &versions)
	host := strings.TrimPrefix(srv.URL, "http://")
	want := metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: host},
		},
	}
	if !reflect.DeepEqual(versions, want) {
		t.Errorf("/api = %+v, want %+v", versions, want)
	}

	var groups metav1.APIGroupList
	getJSON(t, srv, "/apis", "", "application/json", &groups)
	if groups.Kind != "APIGroupList" || len(groups.Groups) != 2 {
		t.Fatalf("/apis = %+v, want the apps and coordination.k8s.io groups", groups)
	}
	apps := groups.Groups[0]
	wantVersion := metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}
	if apps.Name != "apps" || apps.PreferredVersion != wantVersion || len(apps.Versions) != 1 {
		t.Errorf("/apis group 0 = %+v, want apps with preferred apps/v1", apps)
	}
	if groups.Groups[1].Name != "coordination.k8s.io" {
		t.Errorf("/apis group 1 = %q, want coordination.k8s.io", groups.Groups[1].Name)
	}

	var group metav1.APIGroup
	getJSON(t, srv, "/apis/apps", "application/json", "application/json", &group)
	if group.Kind != "APIGroup" || group.Name != "apps" || group.PreferredVersion != wantVersion {
		t.Errorf("/apis/apps = %+v", group)
	}
}

func findResource(t *testing.T, list metav1.APIResourceList, name string) metav1.APIResource {
	t.Helper()
	for _, r := range list.APIResources {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("%s lacks %s: %+v", list.GroupVersion, name, list.APIResources)
	return metav1.APIResource{}
}

func TestResourceLists(t *testing.T) {
	_, srv := newServer(t, discoverytest.Resources())

	var core metav1.APIResourceList
	getJSON(t, srv, "/api/v1", "application/json", "application/json", &core)
	if core.GroupVersion != "v1" || core.Kind != "APIResourceList" {
		t.Fatalf("/api/v1 = %+v", core)
	}
	var names []string
	for _, r := range core.APIResources {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "configmaps nodes nodes/status pods pods/binding pods/status" {
		t.Errorf("/api/v1 resources = %s", got)
	}
	allVerbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	pods := findResource(t, core, "pods")
	wantPods := metav1.APIResource{
		Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: allVerbs,
		ShortNames: []string{"po"}, Categories: []string{"all"},
		StorageVersionHash: "xPOwRZ+Yhw8=", // the value kube-apiserver publishes
	}
	if !reflect.DeepEqual(pods, wantPods) {
		t.Errorf("pods = %+v, want %+v", pods, wantPods)
	}
	binding := findResource(t, core, "pods/binding")
	if binding.Kind != "Binding" || !reflect.DeepEqual(binding.Verbs, metav1.Verbs{"create"}) ||
		!binding.Namespaced || binding.Group != "" || binding.Version != "" {
		t.Errorf("pods/binding = %+v", binding)
	}
	status := findResource(t, core, "pods/status")
	if status.Kind != "Pod" || !reflect.DeepEqual(status.Verbs, metav1.Verbs{"get", "patch", "update"}) {
		t.Errorf("pods/status = %+v", status)
	}
	if nodes := findResource(t, core, "nodes"); nodes.Namespaced || nodes.StorageVersionHash != "XwShjMxG9Fs=" {
		t.Errorf("nodes = %+v", nodes)
	}

	var apps metav1.APIResourceList
	getJSON(t, srv, "/apis/apps/v1", "application/json", "application/json", &apps)
	scale := findResource(t, apps, "deployments/scale")
	wantScale := metav1.APIResource{
		Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1",
		Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"},
	}
	if !reflect.DeepEqual(scale, wantScale) {
		t.Errorf("deployments/scale = %+v, want %+v", scale, wantScale)
	}
	deployments := findResource(t, apps, "deployments")
	if !reflect.DeepEqual(deployments.ShortNames, []string{"deploy"}) || deployments.StorageVersionHash != "8aSe+NMegvE=" {
		t.Errorf("deployments = %+v", deployments)
	}
	findResource(t, apps, "deployments/status")
}

func TestAggregatedV2(t *testing.T) {
	_, srv := newServer(t, discoverytest.Resources())
	const v2Type = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

	var apis apidiscoveryv2.APIGroupDiscoveryList
	resp := getJSON(t, srv, "/apis", clientGoAccept, v2Type, &apis)
	if apis.APIVersion != "apidiscovery.k8s.io/v2" || apis.Kind != "APIGroupDiscoveryList" {
		t.Errorf("/apis TypeMeta = %+v", apis.TypeMeta)
	}
	if len(apis.Items) != 2 || apis.Items[0].Name != "apps" || apis.Items[1].Name != "coordination.k8s.io" {
		t.Fatalf("/apis items = %+v", apis.Items)
	}
	version := apis.Items[0].Versions[0]
	if version.Version != "v1" || version.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent || len(version.Resources) != 1 {
		t.Fatalf("apps versions = %+v", apis.Items[0].Versions)
	}
	deployments := version.Resources[0]
	wantDeployments := apidiscoveryv2.APIResourceDiscovery{
		Resource:         "deployments",
		ResponseKind:     &metav1.GroupVersionKind{Kind: "Deployment"}, // kube-apiserver leaves its own group-version out
		Scope:            apidiscoveryv2.ScopeNamespace,
		SingularResource: "deployment",
		Verbs:            []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
		ShortNames:       []string{"deploy"},
		Categories:       []string{"all"},
		Subresources: []apidiscoveryv2.APISubresourceDiscovery{
			{Subresource: "scale", ResponseKind: &metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
				Verbs: []string{"get", "patch", "update"}},
			{Subresource: "status", ResponseKind: &metav1.GroupVersionKind{Kind: "Deployment"},
				Verbs: []string{"get", "patch", "update"}},
		},
	}
	if !reflect.DeepEqual(deployments, wantDeployments) {
		t.Errorf("deployments = %+v\nwant %+v", deployments, wantDeployments)
	}

	// ETag and conditional GET.
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Vary") != "Accept" {
		t.Fatalf("/apis headers = %v, want an ETag and Vary: Accept", resp.Header)
	}
	cond, body := get(t, srv, "/apis", http.Header{"Accept": {clientGoAccept}, "If-None-Match": {etag}})
	if cond.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("conditional GET /apis: status %d, %d body bytes; want 304 and none", cond.StatusCode, len(body))
	}
	stale, _ := get(t, srv, "/apis", http.Header{"Accept": {clientGoAccept}, "If-None-Match": {`"stale"`}})
	if stale.StatusCode != http.StatusOK {
		t.Errorf("GET /apis with a stale ETag: status %d, want 200", stale.StatusCode)
	}

	var core apidiscoveryv2.APIGroupDiscoveryList
	getJSON(t, srv, "/api", clientGoAccept, v2Type, &core)
	if len(core.Items) != 1 || core.Items[0].Name != "" || core.Items[0].Versions[0].Version != "v1" {
		t.Fatalf("/api items = %+v", core.Items)
	}
	var podSubresources []string
	for _, r := range core.Items[0].Versions[0].Resources {
		if r.Resource == "pods" {
			if r.Scope != apidiscoveryv2.ScopeNamespace || r.ResponseKind.Kind != "Pod" {
				t.Errorf("pods = %+v", r)
			}
			for _, s := range r.Subresources {
				podSubresources = append(podSubresources, s.Subresource+":"+s.ResponseKind.Kind+":"+strings.Join(s.Verbs, "/"))
			}
		}
		if r.Resource == "nodes" && r.Scope != apidiscoveryv2.ScopeCluster {
			t.Errorf("nodes scope = %s, want Cluster", r.Scope)
		}
	}
	if got := strings.Join(podSubresources, " "); got != "binding:Binding:create status:Pod:get/patch/update" {
		t.Errorf("pod subresources = %s", got)
	}
}

func TestAggregatedV2Beta1(t *testing.T) {
	_, srv := newServer(t, discoverytest.Resources())
	accept := "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	var list apidiscoveryv2beta1.APIGroupDiscoveryList
	getJSON(t, srv, "/apis", accept,
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", &list)
	if list.APIVersion != "apidiscovery.k8s.io/v2beta1" || len(list.Items) != 2 {
		t.Fatalf("v2beta1 /apis = %+v", list)
	}
	r := list.Items[0].Versions[0].Resources[0]
	if r.Resource != "deployments" || r.Scope != apidiscoveryv2beta1.ScopeNamespace || len(r.Subresources) != 2 {
		t.Errorf("v2beta1 deployments = %+v", r)
	}
}

func TestNegotiationFallbacks(t *testing.T) {
	_, srv := newServer(t, discoverytest.Resources())
	cases := []struct {
		accept   string
		status   int
		wantType string
	}{
		{"", http.StatusOK, "application/json"},
		{"*/*", http.StatusOK, "application/json"},
		{"application/json, */*", http.StatusOK, "application/json"},
		// A preferred but unknown version falls through to the next clause.
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", http.StatusOK, "application/json"},
		// q-values outrank header order.
		{"application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", http.StatusOK,
			"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		// Newer clients ask for the no-peer profile first.
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + clientGoAccept, http.StatusOK,
			"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", http.StatusNotAcceptable, "application/json"},
		{"application/yaml", http.StatusNotAcceptable, "application/json"},
	}
	for _, c := range cases {
		resp, body := get(t, srv, "/apis", http.Header{"Accept": {c.accept}})
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.wantType {
			t.Errorf("Accept %q: status %d, Content-Type %q; want %d, %q\n%s",
				c.accept, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.wantType, body)
		}
	}
}

func TestErrors(t *testing.T) {
	h, srv := newServer(t, discoverytest.Resources())
	for _, path := range []string{"/apis/nope", "/apis/apps/v2", "/api/v2", "/apis/nope/v1"} {
		resp, body := get(t, srv, path, nil)
		var status metav1.Status
		if err := json.Unmarshal(body, &status); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if resp.StatusCode != http.StatusNotFound || status.Reason != metav1.StatusReasonNotFound || status.Code != 404 {
			t.Errorf("GET %s: status %d, body %+v; want a 404 NotFound Status", path, resp.StatusCode, status)
		}
	}
	// Registered routes only take GET; the handler itself rejects the
	// rest when mounted by other means.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/apis", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /apis: status %d, want 405", rec.Code)
	}
	// A trailing slash names the same document.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/apps/v1/", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"groupVersion":"apps/v1"`) {
		t.Errorf("GET /apis/apps/v1/: status %d: %s", rec.Code, rec.Body.String())
	}
}

func TestUpdate(t *testing.T) {
	h, srv := newServer(t, discoverytest.Resources())
	var before apidiscoveryv2.APIGroupDiscoveryList
	resp := getJSON(t, srv, "/apis", clientGoAccept, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &before)
	etag := resp.Header.Get("ETag")

	widgets := &registry.Resource{
		Group: "example.com", Version: "v1alpha1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList",
		Singular: "widget", Namespaced: true,
		New:     func() runtime.Object { return &corev1.ConfigMap{} },
		NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
	}
	widgetsV1 := *widgets
	widgetsV1.Version = "v1"
	if err := h.Update(append(discoverytest.Resources(), widgets, &widgetsV1)); err != nil {
		t.Fatal(err)
	}
	var group metav1.APIGroup
	getJSON(t, srv, "/apis/example.com", "", "application/json", &group)
	if group.PreferredVersion.Version != "v1" || len(group.Versions) != 2 || group.Versions[1].Version != "v1alpha1" {
		t.Errorf("/apis/example.com = %+v, want v1 preferred over v1alpha1", group)
	}
	cond, _ := get(t, srv, "/apis", http.Header{"Accept": {clientGoAccept}, "If-None-Match": {etag}})
	if cond.StatusCode != http.StatusOK {
		t.Errorf("GET /apis with the pre-update ETag: status %d, want 200", cond.StatusCode)
	}

	// A failed update keeps the served documents.
	dup := discoverytest.Resources()
	if err := h.Update(append(dup, dup[0])); err == nil {
		t.Fatal("Update with a duplicate resource succeeded")
	}
	if err := h.Update([]*registry.Resource{{Resource: "x"}}); err == nil {
		t.Fatal("Update with a resource without version and kind succeeded")
	}
	getJSON(t, srv, "/apis/example.com", "", "application/json", &group)
}

func TestStorageVersionHash(t *testing.T) {
	// Values published by kube-apiserver.
	for gvk, want := range map[schema.GroupVersionKind]string{
		{Version: "v1", Kind: "ConfigMap"}:                           "qFsyl6wFWjQ=",
		{Group: "apps", Version: "v1", Kind: "Deployment"}:           "8aSe+NMegvE=",
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}: "gqkMMb/YqFM=",
	} {
		if got := discovery.StorageVersionHash(gvk); got != want {
			t.Errorf("StorageVersionHash(%v) = %s, want %s", gvk, got, want)
		}
	}
}

// TestGroupOrderAndCustomResponseKind: named groups come in kube-apiserver's
// order whatever the input order, custom groups after them in input order;
// a custom resource's responseKind names its group and version.
func TestGroupOrderAndCustomResponseKind(t *testing.T) {
	custom := &registry.Resource{
		Group: "zz.example.com", Version: "v1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList",
		Singular: "widget", Namespaced: true, Unstructured: true,
	}
	res := discoverytest.Resources()
	// coordination.k8s.io before apps in the input; the custom group first.
	in := []*registry.Resource{custom, res[4], res[3], res[0]}
	_, srv := newServer(t, in)
	var apis apidiscoveryv2.APIGroupDiscoveryList
	getJSON(t, srv, "/apis", clientGoAccept, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &apis)
	var names []string
	for _, g := range apis.Items {
		names = append(names, g.Name)
	}
	if want := []string{"apps", "coordination.k8s.io", "zz.example.com"}; !reflect.DeepEqual(names, want) {
		t.Errorf("group order = %v, want %v", names, want)
	}
	got := apis.Items[2].Versions[0].Resources[0].ResponseKind
	if want := (metav1.GroupVersionKind{Group: "zz.example.com", Version: "v1", Kind: "Widget"}); got == nil || *got != want {
		t.Errorf("custom responseKind = %v, want %v", got, want)
	}
	var legacy metav1.APIGroupList
	getJSON(t, srv, "/apis", "application/json", "application/json", &legacy)
	names = names[:0]
	for _, g := range legacy.Groups {
		names = append(names, g.Name)
	}
	if want := []string{"apps", "coordination.k8s.io", "zz.example.com"}; !reflect.DeepEqual(names, want) {
		t.Errorf("legacy group order = %v, want %v", names, want)
	}
}

// TestCustomResourceVerbsAndSubresources: a custom resource's verbs and
// subresources come in kube-apiserver's CRD discovery order.
func TestCustomResourceVerbsAndSubresources(t *testing.T) {
	custom := &registry.Resource{
		Group: "zz.example.com", Version: "v1", Resource: "widgets", Kind: "Widget", ListKind: "WidgetList",
		Singular: "widget", Namespaced: true, Unstructured: true,
	}
	res := discoverytest.Resources()
	custom.Status, custom.Scale = res[3].Status, res[3].Scale
	_, srv := newServer(t, []*registry.Resource{custom})
	var list metav1.APIResourceList
	getJSON(t, srv, "/apis/zz.example.com/v1", "application/json", "application/json", &list)
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	if want := []string{"widgets", "widgets/status", "widgets/scale"}; !reflect.DeepEqual(names, want) {
		t.Errorf("resources = %v, want %v", names, want)
	}
	if want := []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}; !reflect.DeepEqual([]string(list.APIResources[0].Verbs), want) {
		t.Errorf("verbs = %v, want %v", list.APIResources[0].Verbs, want)
	}
}
