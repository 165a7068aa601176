package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// protoWatch opens a watch with Accept accept and returns the response;
// the body is closed when the test ends.
func protoWatch(t *testing.T, s *testserver.Server, path, accept string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Accept", accept)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("watch %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// protoEvents decodes a protobuf watch stream with apimachinery's own
// length-delimited framer and raw protobuf serializer (what client-go's
// watch decoder runs), the objects with the protobuf serializer.
type protoEvents struct {
	dec   streaming.Decoder
	codec *protobuf.Serializer
}

func newProtoEvents(body io.ReadCloser) *protoEvents {
	codecs := scheme.New()
	raw := protobuf.NewRawSerializer(codecs.Scheme, codecs.Scheme)
	return &protoEvents{
		dec:   streaming.NewDecoder(protobuf.LengthDelimitedFramer.NewFrameReader(body), raw),
		codec: codecs.Proto,
	}
}

// next returns the next event, skipping periodic bookmarks unless a
// bookmark is wanted.
func (p *protoEvents) next(t *testing.T, want watch.EventType) (watch.EventType, runtime.Object) {
	t.Helper()
	for {
		typ, obj := p.read(t)
		if typ != watch.Bookmark || want == watch.Bookmark {
			return typ, obj
		}
	}
}

func (p *protoEvents) read(t *testing.T) (watch.EventType, runtime.Object) {
	t.Helper()
	var ev metav1.WatchEvent
	if _, _, err := p.dec.Decode(nil, &ev); err != nil {
		t.Fatalf("decode watch frame: %v", err)
	}
	if !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
		t.Fatalf("%s event object lacks the protobuf magic: %q", ev.Type, ev.Object.Raw[:min(8, len(ev.Object.Raw))])
	}
	obj, _, err := p.codec.Decode(ev.Object.Raw, nil, nil)
	if err != nil {
		t.Fatalf("decode %s event object: %v", ev.Type, err)
	}
	return watch.EventType(ev.Type), obj
}

// TestProtobufWatch: a watch asked for in protobuf is kube-apiserver's
// length-delimited protobuf stream, with the same events as the JSON
// stream of the same watch: initial events, the initial-events-end
// bookmark, changes, and the 410 ERROR event of an expired position.
func TestProtobufWatch(t *testing.T) {
	s, _ := start(t, nil)
	c := s.RESTClient(t)
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	ctx := context.Background()
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	resp := protoWatch(t, s, path, "application/vnd.kubernetes.protobuf;stream=watch, application/json")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("protobuf watch: %d %q", resp.StatusCode, ct)
	}
	jsonResp := protoWatch(t, s, path, "application/json")
	if ct := jsonResp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("JSON watch: %q", ct)
	}
	events := newProtoEvents(resp.Body)
	jsonEvents := newJSONEvents(t, jsonResp.Body)

	typ, obj := events.next(t, watch.Added)
	jtyp, jobj := jsonEvents(watch.Added)
	if typ != watch.Added || jtyp != typ || !equality.Semantic.DeepEqual(obj, jobj) || !equality.Semantic.DeepEqual(obj, first) {
		t.Fatalf("initial event: %s %#v, JSON %s %#v", typ, obj, jtyp, jobj)
	}
	typ, obj = events.next(t, watch.Bookmark)
	bm, ok := obj.(*corev1.ConfigMap)
	if typ != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.ResourceVersion == "" {
		t.Fatalf("initial-events-end bookmark: %s %#v", typ, obj)
	}
	jsonEvents(watch.Bookmark)

	first.Data["k"] = "w"
	updated, err := cms.Update(ctx, first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typ, obj = events.next(t, watch.Modified)
	jtyp, jobj = jsonEvents(watch.Modified)
	if typ != watch.Modified || jtyp != typ || !equality.Semantic.DeepEqual(obj, jobj) || !equality.Semantic.DeepEqual(obj, updated) {
		t.Fatalf("update event: %s %#v, JSON %s %#v, want %#v", typ, obj, jtyp, jobj, updated)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if typ, obj = events.next(t, watch.Deleted); typ != watch.Deleted || obj.(*corev1.ConfigMap).Name != "a" {
		t.Fatalf("delete event: %s %#v", typ, obj)
	}
}

// TestProtobufWatchExpired: a watch from a compacted position answers 200
// and one protobuf ERROR event carrying the 410 Expired Status.
func TestProtobufWatchExpired(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.WatchCacheCapacity = 16 })
	first := createCM(t, s, "first", nil)
	for i := range 40 {
		createCM(t, s, fmt.Sprintf("later-%d", i), nil)
	}
	resp := protoWatch(t, s, fmt.Sprintf("%s?watch=1&resourceVersion=%d", cmPath, first), "application/vnd.kubernetes.protobuf")
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Header.Get("Content-Type"), ";stream=watch") {
		t.Fatalf("expired protobuf watch: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	typ, obj := newProtoEvents(resp.Body).read(t)
	st, ok := obj.(*metav1.Status)
	if typ != watch.Error || !ok || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("want a 410 Expired ERROR event, got %s %#v", typ, obj)
	}
}

// newJSONEvents reads a JSON watch stream and returns a function giving
// its next event, skipping events until one of type want (bookmarks come
// at the server's pace and need not line up between two streams).
func newJSONEvents(t *testing.T, body io.Reader) func(want watch.EventType) (watch.EventType, runtime.Object) {
	codecs := scheme.New()
	dec := streaming.NewDecoder(json.Framer.NewFrameReader(io.NopCloser(body)), codecs.JSON)
	return func(want watch.EventType) (watch.EventType, runtime.Object) {
		t.Helper()
		for {
			var ev metav1.WatchEvent
			if _, _, err := dec.Decode(nil, &ev); err != nil {
				t.Fatalf("decode JSON watch event: %v", err)
			}
			obj, _, err := codecs.JSON.Decode(ev.Object.Raw, nil, nil)
			if err != nil {
				t.Fatalf("decode JSON %s object: %v", ev.Type, err)
			}
			if watch.EventType(ev.Type) == want {
				return want, obj
			}
		}
	}
}
