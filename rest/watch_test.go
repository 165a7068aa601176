package rest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// next reads one event, failing the test if none arrives. The timeout only
// guards against a hung test; it is not a timing assertion.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("result channel closed early")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event within 30s")
	}
	return watch.Event{}
}

func TestWatchEventsAndBookmark(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	cms := configMaps(c)
	if _, err := cms.Create(ctx, newCM("before", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{
		SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true,
	})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "before" {
		t.Fatalf("initial event = %s %v", ev.Type, ev.Object)
	}
	ev := next(t, w)
	bm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.ResourceVersion == "" {
		t.Fatalf("want the initial-events-end bookmark, got %s %+v", ev.Type, ev.Object)
	}

	cm, err := cms.Create(ctx, newCM("w", nil, map[string]string{"k": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm.Data["k"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, want := range []struct {
		typ  watch.EventType
		data string
	}{{watch.Added, "1"}, {watch.Modified, "2"}, {watch.Deleted, "2"}} {
		ev := next(t, w)
		got, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != want.typ || !ok || got.Name != "w" || got.Data["k"] != want.data {
			t.Fatalf("event = %s %+v, want %s of w with k=%s", ev.Type, ev.Object, want.typ, want.data)
		}
	}
	w.Stop()
	for range w.ResultChan() { // closed after Stop
	}
}

func TestWatchEndsWithContext(t *testing.T) {
	_, c := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := configMaps(c).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	cancel()
	for ev := range w.ResultChan() {
		t.Errorf("unexpected event after cancel: %s", ev.Type)
	}
}

func TestWatchStaleResourceVersionIsGone(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, func(cfg *apiserver.Config) { cfg.WatchCacheCapacity = 16 })
	cms := configMaps(c)
	first, err := cms.Create(ctx, newCM("old", nil, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for i := range 40 { // push the first revision out of the 16-event window
		if _, err := cms.Create(ctx, newCM(fmt.Sprintf("n-%d", i), nil, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	// As kube-apiserver, the server accepts the watch (200) and then sends
	// one ERROR event carrying a 410 Expired Status, and ends the stream.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatalf("stale watch: %v, want a stream with an ERROR event", err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		st, isStatus := ev.Object.(*metav1.Status)
		if !ok || ev.Type != watch.Error || !isStatus || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
			t.Fatalf("stale watch: first event %v %#v (open %v), want ERROR with a 410 Expired Status", ev.Type, ev.Object, ok)
		}
		if !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
			t.Fatalf("the ERROR event's Status is not recognized as expired: %#v", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event on a watch from a compacted revision")
	}
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("event after the ERROR: %v", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream stayed open after the ERROR event")
	}
}

// TestWatchStreamDecoding feeds a hand-written stream from an httptest
// server because the real server cannot be made to send, on demand, an
// ERROR event mid-stream, an unknown event type or a truncated line. It
// checks the decoding contract: ERROR carries *metav1.Status, undecodable
// input becomes one ERROR event, and the channel closes at end of stream.
func TestWatchStreamDecoding(t *testing.T) {
	stream := `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}}
{"type":"SURPRISE","object":{}}
{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"6"}}}
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.Error(w, "not a watch", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, stream)
	}))
	defer srv.Close()
	c, err := rest.New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	w, err := configMaps(c).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	var got []string
	for ev := range w.ResultChan() {
		switch o := ev.Object.(type) {
		case *corev1.ConfigMap:
			got = append(got, fmt.Sprintf("%s/%s", ev.Type, o.ResourceVersion))
		case *metav1.Status:
			got = append(got, fmt.Sprintf("%s/%d", ev.Type, o.Code))
		default:
			t.Fatalf("event %s with %T", ev.Type, ev.Object)
		}
	}
	want := "[ADDED/5 ERROR/410 ERROR/500 MODIFIED/6]"
	if fmt.Sprint(got) != want {
		t.Errorf("events = %v, want %s", got, want)
	}
}
