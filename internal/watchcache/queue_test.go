package watchcache

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// TestFrameQueueKeepsOrderAsItGrowsAndShrinks drives a queue with random
// pushes and pops against a slice: every frame comes out once, in order,
// through growth, wrap-around and release; slots outside the frames are
// zero; a drained ring larger than queueKeepSlots is released.
func TestFrameQueueKeepsOrderAsItGrowsAndShrinks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := newFrameQueue()
	var model []Frame
	var rev int64
	maxSlots, released := 0, 0
	for step := range 4000 {
		if burst := rng.IntN(10) == 0; burst || rng.IntN(2) == 0 {
			n := 1
			if burst {
				n = rng.IntN(300)
			}
			for range n {
				rev++
				f := Frame{Type: watch.Modified, Revision: rev}
				q.push(f)
				model = append(model, f)
			}
		} else {
			for n := rng.IntN(120); n > 0; n-- {
				f, ok, open := q.tryPop()
				if !open {
					t.Fatalf("step %d: open queue reported closed", step)
				}
				if ok != (len(model) > 0) {
					t.Fatalf("step %d: pop ok=%v with %d modelled", step, ok, len(model))
				}
				if !ok {
					break
				}
				if f != model[0] {
					t.Fatalf("step %d: popped revision %d, want %d", step, f.Revision, model[0].Revision)
				}
				model = model[1:]
			}
		}
		before := maxSlots
		maxSlots = max(maxSlots, ringSlots(q))
		if len(model) == 0 && ringSlots(q) == 0 && before > queueKeepSlots {
			released++
		}
		checkQueue(t, q, len(model))
	}
	if maxSlots < 8*queueKeepSlots || released == 0 {
		t.Fatalf("the walk grew the ring to %d slots and released a large one %d times: too tame to test growth and release", maxSlots, released)
	}
}

func checkQueue(t *testing.T, q *frameQueue, want int) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n != want {
		t.Fatalf("n = %d, want %d", q.n, want)
	}
	if l := len(q.buf); l&(l-1) != 0 || l < q.n {
		t.Fatalf("ring of %d slots holding %d", l, q.n)
	}
	for i := q.n; i < len(q.buf); i++ {
		if s := q.buf[(q.head+i)&(len(q.buf)-1)]; s != (Frame{}) {
			t.Fatalf("slot outside the frames holds revision %d", s.Revision)
		}
	}
	if q.n == 0 && len(q.buf) > queueKeepSlots {
		t.Fatalf("drained queue keeps %d slots", len(q.buf))
	}
}

// TestFrameQueueEnds: the receiver gets the frames queued before close,
// then the end; a push after close is dropped; next gives up when done
// closes; waitForRoom returns when the receiver makes room and gives up
// on close, stop or done.
func TestFrameQueueEnds(t *testing.T) {
	q := newFrameQueue()
	q.push(Frame{Revision: 1})
	q.push(Frame{Revision: 2})
	roomed := make(chan bool)
	go func() { roomed <- q.waitForRoom(2, nil, nil) }()
	select {
	case <-roomed:
		t.Fatal("waitForRoom returned with the limit reached")
	case <-time.After(20 * time.Millisecond):
	}
	if f, ok := q.next(nil); !ok || f.Revision != 1 {
		t.Fatalf("next = %d, %v; want 1", f.Revision, ok)
	}
	if !<-roomed {
		t.Fatal("waitForRoom gave up although the receiver made room")
	}
	q.close()
	q.push(Frame{Revision: 3})
	if f, ok := q.next(nil); !ok || f.Revision != 2 {
		t.Fatalf("next after close = %d, %v; want the queued 2", f.Revision, ok)
	}
	if f, ok := q.next(nil); ok {
		t.Fatalf("next after the queued frames = %d, want the end", f.Revision)
	}
	if q.waitForRoom(10, nil, nil) {
		t.Fatal("waitForRoom on a closed queue")
	}

	q = newFrameQueue()
	done := make(chan struct{})
	close(done)
	if _, ok := q.next(done); ok {
		t.Fatal("next on an empty queue returned a frame when done was closed")
	}
	q.push(Frame{Revision: 1})
	if q.waitForRoom(1, nil, done) {
		t.Fatal("waitForRoom at the limit ignored done")
	}
	stop := make(chan struct{})
	go func() { time.Sleep(10 * time.Millisecond); close(stop) }()
	if q.waitForRoom(1, stop, nil) {
		t.Fatal("waitForRoom at the limit ignored stop")
	}
}

// TestIdleWatchersHoldNoBuffer: a watcher's memory follows its backlog —
// an idle one holds no frame slot, one that keeps up holds the first few,
// and a burst's large buffer is released once its reader drained it — so
// the limit (Config.WatcherBuffer) costs nothing until frames wait.
func TestIdleWatchersHoldNoBuffer(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	idle := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: e.cache.Revision(),
		Field: mustFieldSelector(t, "metadata.name=nobody")})
	busy := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: e.cache.Revision()})
	var last int64
	for i := range 3 * queueKeepSlots {
		last = e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i+1)))
	}
	e.dispatched(last)
	if slots := ringSlots(busy.q); slots <= queueKeepSlots {
		t.Fatalf("a watcher with %d frames waiting has %d slots", 3*queueKeepSlots, slots)
	}
	for range 3 * queueKeepSlots {
		if _, ok := next(t, busy); !ok {
			t.Fatalf("watch ended: %v", busy.Err())
		}
	}
	if slots := ringSlots(busy.q); slots != 0 {
		t.Fatalf("drained after a burst: %d slots kept, want them released", slots)
	}
	last = e.update(cmKey("a", "k"), configMap("a", "k", nil, "again"))
	e.dispatched(last)
	if _, ok := next(t, busy); !ok {
		t.Fatalf("watch ended: %v", busy.Err())
	}
	if slots := ringSlots(busy.q); slots != queueMinSlots {
		t.Fatalf("a watcher keeping up holds %d slots, want %d", slots, queueMinSlots)
	}
	if slots := ringSlots(idle.q); slots != 0 {
		t.Fatalf("an idle watcher holds %d slots", slots)
	}
	expectNone(t, idle)
}

func ringSlots(q *frameQueue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buf)
}
