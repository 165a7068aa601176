package reflector_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

func falsePtr() *bool { f := false; return &f }

// The initial list (at resourceVersion "0") is handed over with one
// Replace, then watch events follow in the server's order, each advancing
// LastSyncResourceVersion.
func TestListThenWatchDeliversEventsInOrder(t *testing.T) {
	h := newHarness(t, nil)
	var want []string
	for i := range 7 {
		createCM(t, h.direct, fmt.Sprintf("cm-%d", i), "v0")
		want = append(want, fmt.Sprintf("cm-%d=v0", i))
	}
	sink := &recorder{}
	r := reflector.New[*corev1.ConfigMap](h.cms, sink, reflector.Options{
		Name: "configmaps", PageSize: 3, WatchList: falsePtr(), Selectors: onlyTestObjects,
	})
	running(t, r.Run)
	eventually(t, "the initial replace", func() bool { return sink.count("replace") == 1 })
	first := sink.snapshot()[0]
	got := slices.Clone(first.Names)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("initial replace = %v, want %v", got, want)
	}
	eventually(t, "the watch", func() bool { return len(h.http.seen(request.watch)) == 1 })

	cm := createCM(t, h.direct, "late", "a")
	cm = updateCM(t, h.direct, cm, "b")
	deleteCM(t, h.direct, "cm-3")
	last := updateCM(t, h.direct, cm, "c")
	eventually(t, "four events", func() bool { return len(sink.eventsSinceReplace()) == 4 })

	evs := sink.eventsSinceReplace()
	wantOps := []string{"add late=a", "update late=b", "delete cm-3=v0", "update late=c"}
	prev, _ := strconv.ParseInt(first.RV, 10, 64)
	for i, ev := range evs {
		if got := ev.Op + " " + ev.Name + "=" + ev.Value; got != wantOps[i] {
			t.Errorf("event %d = %q, want %q", i, got, wantOps[i])
		}
		rv, _ := strconv.ParseInt(ev.RV, 10, 64)
		if rv <= prev {
			t.Errorf("event %d resourceVersion %d not after %d", i, rv, prev)
		}
		prev = rv
	}
	eventually(t, "LastSyncResourceVersion to reach the last event", func() bool {
		rv, _ := strconv.ParseInt(r.LastSyncResourceVersion(), 10, 64)
		want, _ := strconv.ParseInt(last.ResourceVersion, 10, 64)
		return rv >= want
	})
	if err := r.LastError(); err != nil {
		t.Errorf("LastError = %v, want nil", err)
	}

	// The wire shape: first list at "0" with the page size (the server
	// answers it whole from its watch cache), then a watch with bookmarks
	// from the list's version and a timeout in [5m, 10m).
	lists := h.http.seen(request.list)
	if len(lists) != 1 || lists[0].Query.Get("resourceVersion") != "0" || lists[0].Query.Get("limit") != "3" ||
		lists[0].Query.Get("labelSelector") != "test=reflector" {
		t.Errorf("lists = %v, want one at resourceVersion 0, limit 3, with the label selector", lists)
	}
	w := h.http.seen(request.watch)[0].Query
	if w.Get("resourceVersion") != first.RV || w.Get("allowWatchBookmarks") != "true" || w.Has("sendInitialEvents") {
		t.Errorf("watch query = %v, want a plain watch with bookmarks from %s", w, first.RV)
	}
	if secs, _ := strconv.Atoi(w.Get("timeoutSeconds")); secs < 300 || secs >= 600 {
		t.Errorf("watch timeoutSeconds = %d, want in [300, 600)", secs)
	}
}

// Dynamic (unstructured) accessors work too: the list items are
// *unstructured.Unstructured.
func TestUnstructuredListAndWatch(t *testing.T) {
	h := newHarness(t, nil)
	createCM(t, h.direct, "one", "1")
	createCM(t, h.direct, "two", "2")
	c, err := rest.New(clientConfig(t, h.srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	dyn := rest.Dynamic(c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			sink := newQueueSink[*unstructured.Unstructured](t)
			r := reflector.New[*unstructured.Unstructured](dyn, sink.q, reflector.Options{
				WatchList: &streaming, Selectors: onlyTestObjects,
			})
			stop := running(t, r.Run)
			defer stop()
			value := func(u *unstructured.Unstructured) string {
				v, _, _ := unstructured.NestedString(u.Object, "data", "v")
				return v
			}
			eventually(t, "the list", func() bool {
				c := sink.contents(value)
				return c["one"] == "1" && c["two"] == "2"
			})
			name := "dyn-" + strconv.FormatBool(streaming)
			createCM(t, h.direct, name, "3")
			eventually(t, "the watch event", func() bool { return sink.contents(value)[name] == "3" })
			if !sink.q.HasSynced() {
				t.Error("queue not synced after the list")
			}
		})
	}
}

// LastError tells why a reflector cannot sync: here the resource does not
// exist on the server.
func TestLastErrorReportsNotFound(t *testing.T) {
	srv := start(t, nil)
	c, err := rest.New(clientConfig(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	for _, wl := range []*bool{nil, falsePtr()} {
		widgets := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c,
			corev1.SchemeGroupVersion.WithResource("widgets"), true).Namespace("default")
		sink := &recorder{}
		r := reflector.New[*corev1.ConfigMap](widgets, sink, reflector.Options{Name: "widgets", WatchList: wl})
		stop := running(t, r.Run)
		eventually(t, "an error", func() bool { return r.LastError() != nil })
		stop()
		if err := r.LastError(); !apierrorsIsNotFound(err) {
			t.Errorf("WatchList=%v: LastError = %v, want a NotFound error", wl, err)
		}
		if n := len(sink.snapshot()); n != 0 {
			t.Errorf("sink got %d calls, want none", n)
		}
	}
}
