package reflector_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/reflector"
)

// With an explicit page size, the relist after a watch's 410 is an exact
// read at the last synced version. While storage still has that history
// (no compaction yet), it returns the same old state, and a watch from it
// is gone again. The reflector must not repeat that exact read: once the
// position an exact list returned is gone, it lists the newest state.
// (Found by the informer's randomized consistency test: the reflector
// looped on the old state until storage was compacted.)
func TestWatchGoneAfterExactListListsNewest(t *testing.T) {
	var st storage.Store
	h := newHarness(t, smallHistory(&st))
	for _, n := range []string{"a", "b", "c", "d"} {
		createCM(t, h.direct, n, "0")
	}
	sink := newQueueSink[*corev1.ConfigMap](t)
	off := false
	r := reflector.New[*corev1.ConfigMap](h.cms, sink.q, reflector.Options{
		PageSize: 2, WatchList: &off, Selectors: onlyTestObjects, Logger: testLogger(),
		Backoff: reflector.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	running(t, r.Run)
	eventually(t, "the initial list", func() bool { return len(sink.contents(cmValue)) == 4 })
	eventually(t, "the watch", func() bool { return len(h.http.seen(request.watch)) == 1 })
	lastRV := r.LastSyncResourceVersion()
	before := len(h.http.seen(func(request) bool { return true }))

	// More changes than the watch window holds, no compaction.
	h.tcp.SetDown(true)
	deleteCM(t, h.direct, "a")
	c, err := h.direct.Get(context.Background(), "c", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	updateCM(t, h.direct, c, "1")
	createCM(t, h.direct, "e", "0")
	createCM(t, h.direct, "f", "0")
	// A consistent list returns once the server's watch cache holds every
	// change, so the reflector's position is out of the window when it
	// comes back.
	if _, err := h.direct.List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	h.tcp.SetDown(false)

	want := map[string]string{"b": "0", "c": "1", "d": "0", "e": "0", "f": "0"}
	eventually(t, "the newest state", func() bool { return maps.Equal(sink.contents(cmValue), want) })

	var lists [][3]string
	for _, req := range h.http.seen(func(request) bool { return true })[before:] {
		if !req.list() {
			continue
		}
		rv := req.Query.Get("resourceVersion")
		switch {
		case req.Query.Has("continue"):
			rv = "continue"
		case rv == lastRV:
			rv = "last"
		}
		lists = append(lists, [3]string{rv, req.Query.Get("limit"), fmt.Sprint(req.Status)})
	}
	// One exact read of the old state (two pages), then the newest state
	// (five objects, three pages), and nothing more.
	wantLists := [][3]string{{"last", "2", "200"}, {"continue", "2", "200"}, {"", "2", "200"}, {"continue", "2", "200"}, {"continue", "2", "200"}}
	if fmt.Sprint(lists) != fmt.Sprint(wantLists) {
		t.Errorf("lists after the outage = %v, want %v", lists, wantLists)
	}
}
