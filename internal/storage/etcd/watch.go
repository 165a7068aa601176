package etcd

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// A stream given a progress request first checks whether it can answer
// itself (see checkProgress); if not, it asks etcd, waits
// progressFirstCheck for the answer, then every progressRetry checks again
// and asks etcd again: etcd drops a request that arrives
// while the stream's watcher is still catching up, and never answers for a
// watcher whose start revision is above its current revision (a watch from
// the current revision, on a quiet etcd).
const (
	progressFirstCheck = 20 * time.Millisecond
	progressRetry      = 100 * time.Millisecond
)

// Watch opens an etcd watch on prefix from afterRevision+1 (see the package
// comment). The bounds are checked against etcd's current and compacted
// revisions first, so that the errors match the embedded stores exactly.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.WatchStream, error) {
	if afterRevision < 0 {
		return nil, fmt.Errorf("etcd: watch %q: negative revision %d", prefix, afterRevision)
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cur, err := s.currentRevision(ctx)
	if err != nil {
		return nil, err
	}
	if afterRevision > cur {
		return nil, fmt.Errorf("etcd: watch %q: %w", prefix, &storage.FutureRevisionError{Requested: afterRevision, Current: cur})
	}
	if afterRevision == 0 {
		afterRevision = cur
	}
	comp, err := s.refreshCompacted(ctx)
	if err != nil {
		return nil, err
	}
	if afterRevision < comp {
		return nil, fmt.Errorf("etcd: watch %q: %w", prefix, &storage.CompactedError{Requested: afterRevision, Compacted: comp})
	}

	st := &stream{
		s: s, ctx: ctx, pos: afterRevision,
		out:      make(chan storage.WatchResponse),
		progress: make(chan struct{}, 1),
		stopc:    make(chan struct{}),
	}
	// A metadata entry unique to this stream gives it its own gRPC watch
	// stream in the client, so RequestProgress concerns it alone.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	st.wctx = metadata.AppendToOutgoingContext(wctx, "setpoint-watch", strconv.FormatUint(s.nextWatch.Add(1), 10))
	st.cancel = cancel

	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		cancel()
		return nil, storage.ErrClosed
	}
	s.watchers.Add(1)
	s.mu.Unlock()
	start, end := s.rangeOf(prefix)
	wch := s.c.Watch(st.wctx, start, clientv3.WithRange(end), clientv3.WithRev(afterRevision+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	go st.run(wch)
	return st, nil
}

// stream is one storage.WatchStream over one etcd watch. Its goroutine
// (run) owns every field but the channels, err and stopOnce.
type stream struct {
	s      *Store
	ctx    context.Context // the caller's
	wctx   context.Context // the etcd watch's: ctx + own gRPC stream
	cancel context.CancelFunc

	// pos is the highest revision promised to the consumer: every event up
	// to it is delivered or queued.
	pos int64
	// queue holds responses not yet received by the consumer; queued
	// counts their events (bounded by Store.watchBuffer).
	queue  []storage.WatchResponse
	queued int
	// pending is set from a RequestProgress until a notification that
	// answers it is queued. want is the lowest revision that answers it:
	// etcd's current revision read after the request (0 until a read
	// succeeded). etcd's notifications name no request, and one that
	// answers an earlier request (retried, or already answered by
	// checkProgress) may arrive after a later request, below the revision
	// its caller saw before asking.
	pending bool
	want    int64

	out      chan storage.WatchResponse
	progress chan struct{} // capacity 1: a RequestProgress not yet seen
	stopc    chan struct{}
	stopOnce sync.Once

	mu  sync.Mutex
	err error // set once, before out is closed
}

func (st *stream) Responses() <-chan storage.WatchResponse { return st.out }

func (st *stream) RequestProgress() {
	select {
	case st.progress <- struct{}{}:
	default:
	}
}

func (st *stream) Stop() { st.stopOnce.Do(func() { close(st.stopc) }) }

func (st *stream) Err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// run moves etcd's responses to the consumer through the bounded queue
// until the watch ends, then records why and closes out.
func (st *stream) run(wch clientv3.WatchChan) {
	err := st.loop(wch)
	st.cancel()
	st.mu.Lock()
	st.err = err
	st.mu.Unlock()
	close(st.out)
	st.s.watchers.Done()
}

func (st *stream) loop(wch clientv3.WatchChan) error {
	retry := time.NewTimer(progressRetry)
	retry.Stop()
	defer retry.Stop()
	for {
		var outc chan storage.WatchResponse
		var head storage.WatchResponse
		if len(st.queue) > 0 {
			outc, head = st.out, st.queue[0]
		}
		select {
		case outc <- head:
			st.queue[0] = storage.WatchResponse{}
			st.queue = st.queue[1:]
			st.queued -= len(head.Events)
		case wr, ok := <-wch:
			if !ok {
				return st.endReason(fmt.Errorf("etcd: watch channel closed"))
			}
			if err := st.handle(wr); err != nil {
				return err
			}
			if !st.pending {
				retry.Stop()
			}
		case <-st.progress:
			st.pending, st.want = true, 0
			st.checkProgress()
			if st.pending {
				st.requestProgress()
				retry.Reset(progressFirstCheck)
			}
		case <-retry.C:
			if st.pending {
				st.checkProgress()
			}
			if st.pending {
				st.requestProgress()
				retry.Reset(progressRetry)
			}
		case <-st.ctx.Done():
			return nil
		case <-st.stopc:
			return nil
		case <-st.s.closing:
			return storage.ErrClosed
		}
	}
}

// endReason names why the watch ended when etcd's channel closed: the
// caller, Stop and Close take precedence over err.
func (st *stream) endReason(err error) error {
	select {
	case <-st.s.closing:
		return storage.ErrClosed
	case <-st.stopc:
		return nil
	default:
	}
	if st.ctx.Err() != nil {
		return nil
	}
	return err
}

func (st *stream) requestProgress() {
	ctx, cancel := context.WithTimeout(st.wctx, progressRetry)
	defer cancel()
	// A failed request is retried by the timer; a dead stream shows on wch.
	_ = st.s.c.RequestProgress(ctx)
}

// checkProgress reads etcd's current revision (a linearizable read): the
// first read after a request sets the revision that answers it, and the
// stream answers itself when that revision is its position (no event
// above it exists, so every event up to it has been queued). On a quiet
// prefix that is the common case, and it spares a round trip to etcd's
// progress machinery.
func (st *stream) checkProgress() {
	ctx, cancel := context.WithTimeout(st.wctx, progressRetry)
	defer cancel()
	cur, err := st.s.currentRevision(ctx)
	if err != nil {
		return // retried by the timer
	}
	if st.want == 0 {
		st.want = cur
	}
	if cur == st.pos {
		st.queueProgress(cur)
	}
}

// handle queues the content of one etcd response, or says why the watch
// must end.
func (st *stream) handle(wr clientv3.WatchResponse) error {
	if wr.CompactRevision != 0 {
		st.s.raiseCompacted(wr.CompactRevision)
		return fmt.Errorf("etcd: watch: %w", &storage.CompactedError{Requested: st.pos, Compacted: wr.CompactRevision})
	}
	if err := wr.Err(); err != nil {
		return st.endReason(fmt.Errorf("etcd: watch: %w", err))
	}
	if wr.IsProgressNotify() {
		st.queueProgress(wr.Header.Revision)
		return nil
	}
	if len(wr.Events) == 0 {
		return nil // the created notification
	}
	evs := make([]storage.Event, len(wr.Events))
	for i, e := range wr.Events {
		ev, err := st.event(e)
		if err != nil {
			return err
		}
		evs[i] = ev
	}
	st.queued += len(evs)
	if st.queued > st.s.watchBuffer {
		return storage.ErrWatcherTooSlow
	}
	st.pos = evs[len(evs)-1].Revision
	st.queue = append(st.queue, storage.WatchResponse{Events: evs, Revision: st.pos})
	return nil
}

// queueProgress queues a progress notification at rev, merged with one
// already waiting at the tail, when rev answers the pending request.
// Notifications that answer none are dropped — etcd's periodic ones, and
// answers to retried or earlier requests — so that a consumer gets one
// notification per request, as from the embedded stores, and never one
// below the revision it saw before asking.
func (st *stream) queueProgress(rev int64) {
	if !st.pending || st.want == 0 || rev < st.want {
		return
	}
	st.pending, st.want = false, 0
	st.pos = max(st.pos, rev) // events already queued may be above it
	if n := len(st.queue); n > 0 && len(st.queue[n-1].Events) == 0 {
		st.queue[n-1].Revision = st.pos
		return
	}
	st.queue = append(st.queue, storage.WatchResponse{Revision: st.pos})
}

// event converts one etcd event, stripping the key prefix.
func (st *stream) event(e *clientv3.Event) (storage.Event, error) {
	key := string(e.Kv.Key[len(st.s.prefix):])
	ev := storage.Event{Key: key, Revision: e.Kv.ModRevision}
	if e.Type == mvccpb.DELETE {
		ev.Type = storage.EventDelete
		if e.PrevKv != nil {
			ev.PrevValue = e.PrevKv.Value
		} else {
			// etcd reads the previous value when it sends the event; a
			// compaction in between loses it.
			return ev, fmt.Errorf("etcd: watch: delete of %q at %d without its previous value: %w",
				key, ev.Revision, &storage.CompactedError{Requested: ev.Revision - 1, Compacted: st.s.compacted.Load()})
		}
		return ev, nil
	}
	ev.Type = storage.EventPut
	ev.Value = e.Kv.Value
	ev.Created = e.Kv.CreateRevision == e.Kv.ModRevision
	return ev, nil
}
