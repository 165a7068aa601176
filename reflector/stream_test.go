package reflector_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// Against our server the default is a streaming list: one watch request
// whose initial ADDED events, ended by the initial-events-end bookmark,
// become the Replace, and whose later events are the live ones. No list
// request is made at all.
func TestStreamingListIsUsedByDefault(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 5 {
		createCM(t, h.direct, "s-"+strconv.Itoa(i), "0")
	}
	sink := &recorder{}
	r := reflector.New[*corev1.ConfigMap](h.cms, sink, reflector.Options{Selectors: onlyTestObjects, Logger: testLogger()})
	running(t, r.Run)
	eventually(t, "the replace", func() bool { return sink.count("replace") == 1 })
	rep := sink.snapshot()[0]
	got := slices.Sorted(slices.Values(rep.Names))
	if want := []string{"s-0=0", "s-1=0", "s-2=0", "s-3=0", "s-4=0"}; !slices.Equal(got, want) {
		t.Errorf("replace = %v, want %v", got, want)
	}
	if r.LastSyncResourceVersion() != rep.RV {
		t.Errorf("LastSyncResourceVersion = %s, want the bookmark's %s", r.LastSyncResourceVersion(), rep.RV)
	}
	createCM(t, h.direct, "live", "1")
	deleteCM(t, h.direct, "s-0")
	eventually(t, "live events", func() bool { return len(sink.eventsSinceReplace()) == 2 })
	evs := sink.eventsSinceReplace()
	if evs[0].Op != "add" || evs[0].Name != "live" || evs[1].Op != "delete" || evs[1].Name != "s-0" {
		t.Errorf("live events = %v, want add live, delete s-0", evs)
	}

	watches := h.http.seen(request.watch)
	if len(watches) != 1 || !watches[0].streaming() {
		t.Fatalf("watches = %v, want one streaming list", queries(watches))
	}
	q := watches[0].Query
	if q.Get("resourceVersionMatch") != "NotOlderThan" || q.Get("allowWatchBookmarks") != "true" || q.Get("resourceVersion") != "" {
		t.Errorf("streaming query = %v, want NotOlderThan, bookmarks, no resourceVersion (consistent)", q)
	}
	if n := len(h.http.seen(request.list)); n != 0 {
		t.Errorf("%d list requests, want none", n)
	}
}

// A server that rejects sendInitialEvents (422, as one without the
// WatchList feature answers) gets one streaming attempt; the reflector
// then lists and watches, and never tries streaming again, even after the
// watch is cut and resumed. WatchList=false never tries it.
func TestStreamingFallback(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reject     bool
		watchList  *bool
		wantStream int
	}{
		{"rejected by the server", true, nil, 1},
		{"disabled", false, falsePtr(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.http.setRejectStreaming(tc.reject)
			createCM(t, h.direct, "a", "0")
			sink := &recorder{}
			r := reflector.New[*corev1.ConfigMap](h.cms, sink, reflector.Options{
				WatchList: tc.watchList, Selectors: onlyTestObjects, Logger: testLogger(),
			})
			running(t, r.Run)
			eventually(t, "the replace", func() bool { return sink.count("replace") == 1 })
			eventually(t, "the watch", func() bool { return len(h.http.seen(request.watch)) == tc.wantStream+1 })
			h.tcp.Cut()
			createCM(t, h.direct, "b", "0")
			eventually(t, "the event after the cut", func() bool { return len(sink.eventsSinceReplace()) == 1 })

			streams := h.http.seen(request.streaming)
			if len(streams) != tc.wantStream {
				t.Errorf("%d streaming attempts, want %d", len(streams), tc.wantStream)
			}
			if tc.reject && streams[0].Status != 422 {
				t.Errorf("streaming attempt answered %d, want 422", streams[0].Status)
			}
			if n := len(h.http.seen(request.list)); n != 1 {
				t.Errorf("%d lists, want 1", n)
			}
			if sink.count("replace") != 1 {
				t.Errorf("calls = %v, want a single replace", sink.snapshot())
			}
			if err := r.LastError(); err != nil {
				t.Errorf("LastError = %v, want nil after falling back", err)
			}
		})
	}
}

// A streaming attempt that fails for another reason (here the resource is
// missing) is not taken as the server lacking the feature: LastError
// reports it and streaming is tried again.
func TestStreamingNotFoundIsNotAFallback(t *testing.T) {
	h := newHarness(t, nil)
	c, err := rest.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	widgets := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("widgets"), true)
	sink := &recorder{}
	r := reflector.New[*corev1.ConfigMap](widgets, sink, reflector.Options{
		Backoff: reflector.Backoff{Initial: time.Millisecond, Max: time.Millisecond}, Logger: testLogger(),
	})
	running(t, r.Run)
	eventually(t, "two streaming attempts", func() bool { return len(h.http.seen(request.streaming)) >= 2 })
	if err := r.LastError(); !apierrors.IsNotFound(err) {
		t.Errorf("LastError = %v, want NotFound", err)
	}
	if n := len(h.http.seen(request.list)); n != 0 {
		t.Errorf("%d list requests, want none", n)
	}
}
