package watchcache

import (
	"strconv"
	"testing"
	"time"
)

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
	return q.frames.Cap()
}
