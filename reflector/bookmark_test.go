package reflector_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/reflector"
)

// Bookmarks carry the server's progress even when no watched object
// changes: LastSyncResourceVersion follows them, so a resumed watch starts
// late enough not to fall out of the server's history.
func TestBookmarksAdvanceLastSyncResourceVersion(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run("streaming="+strconv.FormatBool(streaming), func(t *testing.T) {
			h := newHarness(t, func(c *apiserver.Config) { c.BookmarkInterval = 20 * time.Millisecond })
			createCM(t, h.direct, "watched", "0")
			sink := &recorder{}
			r := reflector.New[*corev1.ConfigMap](h.cms, sink, reflector.Options{
				WatchList: &streaming, Selectors: onlyTestObjects, Logger: testLogger(),
			})
			running(t, r.Run)
			eventually(t, "the replace", func() bool { return sink.count("replace") == 1 })
			start := rvInt(r.LastSyncResourceVersion())

			// Writes the reflector does not watch (no test label).
			var last int64
			for i := range 3 {
				cm, err := h.direct.Create(context.Background(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: "unwatched-" + strconv.Itoa(i)},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				last = rvInt(cm.ResourceVersion)
			}
			if last <= start {
				t.Fatalf("unwatched write at %d not after the list at %d", last, start)
			}
			eventually(t, "a bookmark past the unwatched writes", func() bool {
				return rvInt(r.LastSyncResourceVersion()) >= last
			})
			if n := sink.count("replace"); n != 1 {
				t.Errorf("%d replaces, want 1", n)
			}
			if evs := sink.eventsSinceReplace(); len(evs) != 0 {
				t.Errorf("sink got events %v for unwatched objects", evs)
			}
		})
	}
}

func rvInt(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}
