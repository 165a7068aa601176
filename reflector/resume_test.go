package reflector_test

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/reflector"
)

// Cutting the connection under a running watch makes the reflector watch
// again from the last resourceVersion it saw: no relist, and every change
// made while it was disconnected arrives exactly once, in order.
func TestResumeAfterDisconnectWithoutRelist(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			h := newHarness(t, nil)
			createCM(t, h.direct, "before", "0")
			sink := &recorder{}
			r := reflector.New[*corev1.ConfigMap](h.cms, sink, reflector.Options{
				WatchList: &streaming, Selectors: onlyTestObjects, Logger: testLogger(),
			})
			running(t, r.Run)
			eventually(t, "the initial replace", func() bool { return sink.count("replace") == 1 })

			var want []string
			cm := createCM(t, h.direct, "x", "0")
			want = append(want, "add x=0")
			eventually(t, "the first event", func() bool { return len(sink.eventsSinceReplace()) == 1 })
			for round := 1; round <= 3; round++ {
				watches := len(h.http.seen(request.watch))
				resumeRV := r.LastSyncResourceVersion()
				h.tcp.Cut()
				// Changes made while the reflector reconnects.
				cm = updateCM(t, h.direct, cm, strconv.Itoa(round))
				want = append(want, "update x="+strconv.Itoa(round))
				name := fmt.Sprintf("new-%d", round)
				createCM(t, h.direct, name, "0")
				want = append(want, "add "+name+"=0")
				eventually(t, "the events of round "+strconv.Itoa(round), func() bool {
					return len(sink.eventsSinceReplace()) == len(want)
				})
				rewatch := h.http.seen(request.watch)[watches]
				if rewatch.streaming() || rewatch.Query.Get("resourceVersion") != resumeRV {
					t.Errorf("round %d: re-watch query %v, want a plain watch from %s", round, rewatch.Query, resumeRV)
				}
			}
			if got := h.tcp.Accepted(); got < 4 {
				t.Errorf("proxy accepted %d connections, want at least 4 (one per cut)", got)
			}
			calls := sink.snapshot()
			if n := sink.count("replace"); n != 1 {
				t.Fatalf("%d replaces, want exactly 1 (no relist): %v", n, calls)
			}
			got := sink.eventsSinceReplace()
			if len(got) != len(want) {
				t.Fatalf("events = %v, want %v", got, want)
			}
			prev := int64(0)
			for i, ev := range got {
				if s := ev.Op + " " + ev.Name + "=" + ev.Value; s != want[i] {
					t.Errorf("event %d = %q, want %q", i, s, want[i])
				}
				rv, _ := strconv.ParseInt(ev.RV, 10, 64)
				if rv <= prev {
					t.Errorf("event %d resourceVersion %d not after %d (duplicate or reordered)", i, rv, prev)
				}
				prev = rv
			}
			if n := len(h.http.seen(request.list)); n != 0 && streaming {
				t.Errorf("%d list requests with streaming lists on, want 0", n)
			}
			if n := len(h.http.seen(request.list)); n != 1 && !streaming {
				t.Errorf("%d list requests, want 1", n)
			}
		})
	}
}
