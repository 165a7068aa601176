package mvcc

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

const (
	// replayChunk is the number of log entries a catching-up watcher reads
	// per backend snapshot, so that no read transaction stays open long.
	replayChunk = 1000
	// maxEventsPerResponse caps the events merged into one WatchResponse.
	maxEventsPerResponse = 1000
)

// hub hands the events of each committed batch to the watchers that are
// synced, that is, have received (or queued) every event up to hub.rev.
type hub struct {
	mu sync.Mutex
	// rev is the revision of the last published batch. It is advanced only
	// by publish, after the batch is durable in the backend, so every
	// revision <= rev can be read back from a new snapshot.
	rev int64
	// watchers holds every running watcher; publish serves those whose
	// synced flag is set. A watcher leaves the map when it ends.
	watchers map[*watcher]struct{}
}

func (h *hub) init(rev int64) {
	h.rev = rev
	h.watchers = make(map[*watcher]struct{})
}

// publish queues the events of one batch, which end at revision rev, on
// every synced watcher. It never blocks on a consumer: a watcher whose
// buffer would overflow is ended with storage.ErrWatcherTooSlow.
func (h *hub) publish(events []storage.Event, rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rev = rev
	for w := range h.watchers {
		if w.synced && !w.deliver(events, rev) {
			delete(h.watchers, w)
		}
	}
}

func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.mu.Unlock()
}

// closeAll ends every watcher with err.
func (h *hub) closeAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		w.mu.Lock()
		w.endLocked(err)
		w.mu.Unlock()
	}
	clear(h.watchers)
}

// Watch opens a watch on prefix delivering every event after
// afterRevision. An afterRevision above the current revision fails with
// storage.ErrFutureRevision (a *storage.FutureRevisionError).
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.WatchStream, error) {
	if afterRevision < 0 {
		return nil, fmt.Errorf("mvcc: watch %q: negative revision %d", prefix, afterRevision)
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watcher{
		s:       s,
		prefix:  prefix,
		limit:   s.watchBuffer,
		ctx:     ctx,
		out:     make(chan storage.WatchResponse),
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	h := &s.hub
	h.mu.Lock()
	cur := h.rev
	switch comp := s.compacted.Load(); {
	case afterRevision > cur:
		h.mu.Unlock()
		return nil, fmt.Errorf("mvcc: watch %q: %w", prefix, &storage.FutureRevisionError{Requested: afterRevision, Current: cur})
	case afterRevision == 0:
		afterRevision = cur
	case afterRevision < comp:
		h.mu.Unlock()
		return nil, fmt.Errorf("mvcc: watch %q: %w", prefix, &storage.CompactedError{Requested: afterRevision, Compacted: comp})
	}
	w.pos = afterRevision
	w.synced = afterRevision == cur
	h.watchers[w] = struct{}{}
	s.watchers.Add(1)
	h.mu.Unlock()
	go w.run()
	return w, nil
}

// readLog reads from one snapshot the events under prefix with revisions
// in (after, target], looking at no more than limit log entries. The
// response's Revision is the last revision examined: every event under
// prefix up to it is in the response. It fails with a
// *storage.CompactedError if revision after+1 is no longer in the log.
func (s *Store) readLog(prefix string, after, target int64, limit int) (storage.WatchResponse, error) {
	resp := storage.WatchResponse{Revision: target}
	err := s.b.View(func(tx ReadTx) error {
		comp, err := decodeRev(tx.Get(metaCompacted))
		if err != nil {
			return err
		}
		if after < comp {
			return &storage.CompactedError{Requested: after, Compacted: comp}
		}
		c := tx.Cursor()
		seen := 0
		for k, v := c.Seek(logKey(after + 1)); k != nil && k[0] == nsLog; k, v = c.Next() {
			rev, ok := parseLogKey(k)
			if !ok {
				return fmt.Errorf("mvcc: corrupt log key %q", k)
			}
			if rev > target {
				return nil
			}
			if seen == limit {
				resp.Revision = rev - 1
				return nil
			}
			seen++
			if !strings.HasPrefix(string(v), prefix) {
				continue
			}
			ev, err := eventAt(tx, string(v), rev)
			if err != nil {
				return err
			}
			resp.Events = append(resp.Events, ev)
		}
		return nil
	})
	return resp, err
}

// eventAt rebuilds the event of key at rev from its index entries.
func eventAt(tx ReadTx, key string, rev int64) (storage.Event, error) {
	v := tx.Get(indexKey(key, rev))
	if v == nil {
		return storage.Event{}, fmt.Errorf("mvcc: log names %q at %d but its index entry is missing", key, rev)
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return storage.Event{}, fmt.Errorf("key %q: %w", key, err)
	}
	if !rec.tombstone {
		return storage.Event{
			Type: storage.EventPut, Key: key, Value: cloneBytes(rec.value),
			Revision: rev, Created: rec.createRev == rev,
		}, nil
	}
	// The value before a deletion is the newest entry below it, which
	// compaction keeps: a key live just before rev > compacted keeps its
	// newest entry <= compacted.
	pfx := indexPrefix(key)
	k, pv := tx.Cursor().Seek(indexKey(key, rev-1))
	if k == nil || !bytes.HasPrefix(k, pfx) {
		return storage.Event{}, fmt.Errorf("mvcc: no value before the deletion of %q at %d", key, rev)
	}
	prev, err := decodeRecord(pv)
	if err != nil || prev.tombstone {
		return storage.Event{}, fmt.Errorf("mvcc: bad value before the deletion of %q at %d (err %v)", key, rev, err)
	}
	return storage.Event{Type: storage.EventDelete, Key: key, PrevValue: cloneBytes(prev.value), Revision: rev}, nil
}
