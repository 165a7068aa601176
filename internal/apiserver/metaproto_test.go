package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// The Accept headers of client-go's metadata client (v0.37): protobuf
// first, the JSON view, then plain JSON.
const (
	metadataAccept     = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	metadataListAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)

// TestMetadataOnlyInProtobuf: a metadata client's Get, List and Watch are
// answered in protobuf, as kube-apiserver answers them, for built-in
// kinds and custom resources alike; every watch event carries a
// PartialObjectMetadata, the bookmark ending the initial events included.
func TestMetadataOnlyInProtobuf(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "meta", map[string]string{"k": "v"})
	createWidgetCRD(t, s)
	if code, body, _ := do(t, s, http.MethodPost, widgetsPath, "application/json",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"meta"},"spec":{"image":"nginx"}}`); code != http.StatusCreated {
		t.Fatalf("create widget: %d %s", code, body)
	}
	for _, path := range []string{cmPath, widgetsPath} {
		obj := metaGet(t, s, path+"/meta", metadataAccept)
		if p, ok := obj.(*metav1.PartialObjectMetadata); !ok || p.Name != "meta" || p.UID == "" {
			t.Errorf("GET %s/meta: %#v", path, obj)
		}
		list := metaGet(t, s, path, metadataListAccept)
		if l, ok := list.(*metav1.PartialObjectMetadataList); !ok || len(l.Items) != 1 || l.Items[0].Name != "meta" || l.ResourceVersion == "" {
			t.Errorf("LIST %s: %#v", path, list)
		}
		resp := protoWatch(t, s, path+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", metadataAccept)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/vnd.kubernetes.protobuf;stream=watch" {
			t.Fatalf("watch %s: %d %q", path, resp.StatusCode, ct)
		}
		events := newProtoEvents(resp.Body)
		if typ, obj := events.next(t, watch.Added); typ != watch.Added || !isPartial(obj, "meta") {
			t.Errorf("watch %s: initial event %s %#v", path, typ, obj)
		}
		typ, obj := events.next(t, watch.Bookmark)
		if p, ok := obj.(*metav1.PartialObjectMetadata); typ != watch.Bookmark || !ok || p.Annotations[metav1.InitialEventsAnnotationKey] != "true" || p.ResourceVersion == "" {
			t.Errorf("watch %s: initial-events-end bookmark %s %#v", path, typ, obj)
		}
	}
}

// TestTableIsNeverProtobuf: as kube-apiserver, a Table has no protobuf
// form: the protobuf Table entry of an Accept header is passed over for
// the next one.
func TestTableIsNeverProtobuf(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "table", nil)
	obj := metaGet(t, s, cmPath+"/table", "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/vnd.kubernetes.protobuf")
	if _, ok := obj.(*metav1.Table); ok {
		t.Fatalf("a Table in protobuf: %#v", obj)
	}
}

// metaGet GETs path with Accept accept, expects a protobuf answer and
// decodes it.
func metaGet(t *testing.T, s *testserver.Server, path, accept string) any {
	t.Helper()
	resp := protoWatch(t, s, path, accept) // a GET with that Accept
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/vnd.kubernetes.protobuf" || !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Fatalf("GET %s (%s): %d %q %q", path, accept, resp.StatusCode, ct, body[:min(len(body), 64)])
	}
	obj, _, err := scheme.New().Proto.Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return obj
}

func isPartial(obj any, name string) bool {
	p, ok := obj.(*metav1.PartialObjectMetadata)
	return ok && p.Name == name && p.UID != ""
}
