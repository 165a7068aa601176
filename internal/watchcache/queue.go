package watchcache

import (
	"sync"

	"github.com/setpoint-dev/setpoint/internal/ring"
)

// frameQueue is a watcher's buffer: the frames sent to it and not yet
// received, oldest first, and whether it is closed. It holds memory in
// proportion to the frames waiting in it, not to the watcher's limit: an
// idle watcher holds none, one that receives as fast as frames come holds
// a few slots, and only a reader that falls behind grows it (up to the
// limit its senders enforce). A server with many thousands of watches,
// most of them idle, pays for its backlog only.
//
// Senders never block in push; a sender that must respect the watcher's
// limit uses pushWithin, and one that may wait for room (a catching-up
// watcher's goroutine) calls waitForRoom first. Exactly one goroutine
// receives (next, tryPop).
//
// Invariants (under mu): frames holds the frames sent and not yet
// received, oldest first (see package ring for its buffer's rules); after
// close no frame is added, and the receiver still gets those queued, then
// the end.
type frameQueue struct {
	mu     sync.Mutex
	frames ring.Ring[Frame]
	closed bool
	// roomWanted: a sender waits in waitForRoom; the next pop signals room.
	roomWanted bool

	// wake has a token when frames arrived or the queue closed since the
	// receiver last waited; room has one when a frame was received since
	// a sender asked for room. Both have capacity 1.
	wake chan struct{}
	room chan struct{}
}

const (
	// queueMinSlots is the first allocation of a queue's ring: 8 frames
	// (256 bytes), enough for a watcher that keeps up.
	queueMinSlots = 8
	// queueKeepSlots is the largest ring a drained queue keeps; a larger one,
	// grown by a burst, is released when the reader empties it.
	queueKeepSlots = 64
)

func newFrameQueue() *frameQueue {
	return &frameQueue{frames: ring.Ring[Frame]{MinSlots: queueMinSlots, KeepSlots: queueKeepSlots},
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// len is the number of frames waiting.
func (q *frameQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.frames.Len()
}

// push appends f unless the queue is closed (then f is dropped: nobody
// will receive it) and wakes the receiver.
func (q *frameQueue) push(f Frame) { q.pushWithin(f, -1) }

// pushWithin is push if fewer than limit frames wait (any number for a
// negative limit); false, and nothing pushed, otherwise.
func (q *frameQueue) pushWithin(f Frame, limit int) bool {
	q.mu.Lock()
	if limit >= 0 && q.frames.Len() >= limit {
		q.mu.Unlock()
		return false
	}
	if q.closed {
		q.mu.Unlock()
		return true
	}
	q.frames.Push(f)
	q.mu.Unlock()
	signal(q.wake)
	return true
}

// close ends the queue after the frames it holds. Idempotent.
func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	signal(q.wake)
	signal(q.room) // a sender waiting for room gives up on a closed queue
}

// tryPop takes the oldest frame if there is one; open is false once the
// queue is closed and empty.
func (q *frameQueue) tryPop() (f Frame, ok, open bool) {
	q.mu.Lock()
	f, ok = q.frames.Pop()
	if !ok {
		open = !q.closed
		q.mu.Unlock()
		return Frame{}, false, open
	}
	wanted := q.roomWanted
	q.roomWanted = false
	q.mu.Unlock()
	if wanted {
		signal(q.room)
	}
	return f, true, true
}

// next takes the oldest frame, waiting for one; ok is false when the queue
// is closed and empty or done is closed first.
func (q *frameQueue) next(done <-chan struct{}) (Frame, bool) {
	for {
		f, ok, open := q.tryPop()
		if ok {
			return f, true
		}
		if !open {
			return Frame{}, false
		}
		select {
		case <-q.wake:
		case <-done:
			return Frame{}, false
		}
	}
}

// waitForRoom waits until fewer than limit frames wait (true), or the
// queue is closed, stop or done is closed (false).
func (q *frameQueue) waitForRoom(limit int, stop, done <-chan struct{}) bool {
	for {
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			return false
		case q.frames.Len() < limit:
			q.mu.Unlock()
			return true
		}
		q.roomWanted = true
		q.mu.Unlock()
		select {
		case <-q.room:
		case <-stop:
			return false
		case <-done:
			return false
		}
	}
}

// signal leaves a token in a capacity-1 channel unless one is there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
