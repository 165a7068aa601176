package mvcc

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// errStopped tells run that the watcher already ended.
var errStopped = errors.New("mvcc: watcher stopped")

// watcher is one open watch. Its goroutine (run) first catches up from the
// revision log, then becomes synced and forwards what publish queues.
// Lock order: hub.mu before watcher.mu.
type watcher struct {
	s      *Store
	prefix string
	limit  int // max events pending (queued or taken but not received)
	ctx    context.Context

	out     chan storage.WatchResponse // closed by run when it returns, after err is set
	wake    chan struct{}              // capacity 1: something was queued or requested
	stopped chan struct{}              // closed when the watch ends, whatever the reason
	exited  chan struct{}              // closed when run has returned

	// synced is guarded by hub.mu. Once set, publish queues every later
	// batch on this watcher; it is set only when pos equals hub.rev.
	synced bool

	mu    sync.Mutex
	ended bool  // guarded by mu; set once, with err
	err   error // guarded by mu; why the watch ended
	// pos is guarded by mu: every event under prefix with a revision <=
	// pos has been queued or received.
	pos   int64
	queue []storage.Event // guarded by mu; events not yet taken by run
	// pending, guarded by mu, counts queued events plus those taken by run
	// and not yet received by the consumer; it never exceeds limit.
	pending  int
	progress bool // guarded by mu: a progress notification is due
	// progressAt, guarded by mu, is the store's revision when the due
	// notification was last requested: it is sent only once pos reaches
	// it. The store makes a batch's revision current (CurrentRevision)
	// just before publish queues it, so a request made in between would
	// otherwise be answered with the revision before, and a consistent
	// read waiting for the revision it was told would wait for the next
	// request.
	progressAt int64
}

var _ storage.WatchStream = (*watcher)(nil)

// Responses implements storage.WatchStream.
func (w *watcher) Responses() <-chan storage.WatchResponse { return w.out }

// RequestProgress implements storage.WatchStream. A catching-up watcher
// answers once it is synced, since only then does it know the store's
// revision.
func (w *watcher) RequestProgress() {
	at := w.s.rev.Load()
	w.mu.Lock()
	if !w.ended {
		w.progress = true
		w.progressAt = max(w.progressAt, at)
	}
	w.mu.Unlock()
	w.signal()
}

// Err implements storage.WatchStream.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop implements storage.WatchStream: it ends the watch and waits for its
// goroutine.
func (w *watcher) Stop() {
	w.end(nil)
	<-w.exited
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// endLocked records why the watch ended; the first reason wins.
func (w *watcher) endLocked(err error) {
	if w.ended {
		return
	}
	w.ended, w.err = true, err
	w.queue = nil
	close(w.stopped)
}

// end ends the watch and unregisters it. The caller must not hold hub.mu.
func (w *watcher) end(err error) {
	w.mu.Lock()
	w.endLocked(err)
	w.mu.Unlock()
	w.s.hub.remove(w)
}

// deliver queues the events of a batch ending at rev; hub.mu is held. It
// returns false if the watcher has ended (now or before).
func (w *watcher) deliver(events []storage.Event, rev int64) bool {
	n := 0
	for i := range events {
		if strings.HasPrefix(events[i].Key, w.prefix) {
			n++
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	if w.pending+n > w.limit {
		w.endLocked(storage.ErrWatcherTooSlow)
		return false
	}
	if n > 0 {
		for i := range events {
			if strings.HasPrefix(events[i].Key, w.prefix) {
				w.queue = append(w.queue, events[i])
			}
		}
		w.pending += n
	}
	w.pos = rev
	if n > 0 || w.progressDueLocked() {
		w.signal()
	}
	return true
}

// run is the watcher's goroutine.
func (w *watcher) run() {
	defer w.s.watchers.Done()
	defer close(w.exited)
	defer close(w.out)
	if err := w.catchUp(); err != nil {
		if err != errStopped {
			w.end(err)
		}
		return
	}
	w.stream()
}

// catchUp replays the log from pos until pos reaches hub.rev, then marks
// the watcher synced under hub.mu, so that publish takes over with the
// very next revision: no gap, no duplicate.
func (w *watcher) catchUp() error {
	h := &w.s.hub
	for {
		if err := w.checkStop(); err != nil {
			return err
		}
		h.mu.Lock()
		w.mu.Lock()
		pos := w.pos
		w.mu.Unlock()
		if pos >= h.rev {
			w.synced = true
			h.mu.Unlock()
			return nil
		}
		target := h.rev
		h.mu.Unlock()
		resp, err := w.s.readLog(w.prefix, pos, target, replayChunk)
		if err != nil {
			return err
		}
		if len(resp.Events) > 0 && !w.send(resp) {
			return errStopped
		}
		w.mu.Lock()
		w.pos = resp.Revision
		w.mu.Unlock()
	}
}

// checkStop returns errStopped if the watch ended or its context is done
// (ending it with a nil error).
func (w *watcher) checkStop() error {
	select {
	case <-w.stopped:
		return errStopped
	case <-w.ctx.Done():
		w.end(nil)
		return errStopped
	default:
		return nil
	}
}

// stream forwards queued events and progress notifications until the
// watch ends.
func (w *watcher) stream() {
	for {
		resp, n, ok := w.take()
		if !ok {
			select {
			case <-w.wake:
				continue
			case <-w.stopped:
				return
			case <-w.ctx.Done():
				w.end(nil)
				return
			}
		}
		if !w.send(resp) {
			return
		}
		if n > 0 {
			w.mu.Lock()
			w.pending -= n
			w.mu.Unlock()
		}
	}
}

// take removes the next response from the queue: queued events first
// (merged, at most maxEventsPerResponse), then a due progress notification.
// n is the number of events taken; ok is false if there is nothing to send
// or the watch ended.
func (w *watcher) take() (resp storage.WatchResponse, n int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return resp, 0, false
	}
	if len(w.queue) > 0 {
		n = min(len(w.queue), maxEventsPerResponse)
		resp.Events = w.queue[:n:n]
		resp.Revision = w.pos
		if n < len(w.queue) {
			resp.Revision = resp.Events[n-1].Revision
			w.queue = w.queue[n:]
		} else {
			w.queue = nil // never reuse an array the consumer holds
		}
		return resp, n, true
	}
	if w.progressDueLocked() {
		w.progress = false
		return storage.WatchResponse{Revision: w.pos}, 0, true
	}
	return resp, 0, false
}

// progressDueLocked reports whether the requested progress notification
// can be sent: pos covers the revision current at the request.
func (w *watcher) progressDueLocked() bool { return w.progress && w.pos >= w.progressAt }

// send hands resp to the consumer; false means the watch ended first.
func (w *watcher) send(resp storage.WatchResponse) bool {
	select {
	case w.out <- resp:
		return true
	case <-w.stopped:
		return false
	case <-w.ctx.Done():
		w.end(nil)
		return false
	}
}
