package openapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TestVirtualResources checks the operations published for resources
// whose objects are not stored, as kube-apiserver publishes them: a
// create-only review has its POST only (and no list model), a resource
// served by get and list (componentstatuses) its two reads.
func TestVirtualResources(t *testing.T) {
	resources := append(discoverytest.Resources(),
		&registry.Resource{
			Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview",
			Namespaced: true, New: func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
			Virtual: &registry.Virtual{Create: virtualCreate},
		},
		&registry.Resource{
			Version: "v1", Resource: "componentstatuses", Kind: "ComponentStatus", ListKind: "ComponentStatusList",
			New:     func() runtime.Object { return &corev1.ComponentStatus{} },
			NewList: func() runtime.Object { return &corev1.ComponentStatusList{} },
			Virtual: &registry.Virtual{Get: virtualGet, List: virtualGet},
		})
	s, err := openapi.New(resources, openapi.Options{Version: "v1.37.0-setpoint", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	doc := v3Doc(t, srv, "apis/authorization.k8s.io/v1")
	var paths []string
	for p := range doc.Paths.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if want := []string{"/apis/authorization.k8s.io/v1/", "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews"}; !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	item := doc.Paths.Paths[paths[1]]
	if item.Get != nil || item.Post == nil || item.Post.OperationId != "createAuthorizationV1NamespacedLocalSubjectAccessReview" {
		t.Errorf("review operations: get %v, post %+v", item.Get, item.Post)
	}
	if _, ok := doc.Components.Schemas["io.k8s.api.authorization.v1.LocalSubjectAccessReview"]; !ok {
		t.Error("no LocalSubjectAccessReview schema")
	}

	core := v3Doc(t, srv, "api/v1")
	list, read := core.Paths.Paths["/api/v1/componentstatuses"], core.Paths.Paths["/api/v1/componentstatuses/{name}"]
	if list == nil || list.Get == nil || list.Get.OperationId != "listCoreV1ComponentStatus" || list.Post != nil || list.Delete != nil {
		t.Errorf("componentstatuses collection: %+v", list)
	}
	if read == nil || read.Get == nil || read.Get.OperationId != "readCoreV1ComponentStatus" || read.Put != nil || read.Delete != nil {
		t.Errorf("componentstatuses item: %+v", read)
	}
	if _, ok := core.Paths.Paths["/api/v1/watch/componentstatuses"]; ok {
		t.Error("componentstatuses has a watch path")
	}
}

func virtualCreate(_ context.Context, _ registry.Env, _ registry.Request, obj runtime.Object) (runtime.Object, error) {
	return obj, nil
}

func virtualGet(context.Context, registry.Env, registry.Request) (runtime.Object, error) {
	return &corev1.ComponentStatusList{}, nil
}
