package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
)

// Options configure a Broadcaster. Zero values select the defaults.
type Options struct {
	// Sink stores the events, usually NewRESTSink(client). Required.
	Sink Sink
	// Scheme resolves the kind of objects with empty TypeMeta; nil means
	// NewScheme().
	Scheme *runtime.Scheme
	// Clock stamps events and times the correlator and retries; nil means
	// the real clock.
	Clock clock.Clock
	// Logger receives drops and write failures; nil means slog.Default().
	Logger *slog.Logger
	// QueueSize bounds the events waiting to be written. Default 1000.
	QueueSize int
	// MaxTries bounds the attempts to write one event when the sink fails
	// with a non-API error. Default 12.
	MaxTries int
	// RetryInterval separates those attempts; the first retry comes after
	// a random fraction of it, so many recorders do not retry in step.
	// Default 10s.
	RetryInterval time.Duration
	// Correlator tunes deduplication, aggregation and spam filtering.
	Correlator CorrelatorOptions
}

// Stats count what happened to recorded events.
type Stats struct {
	Dropped  uint64 // queue full, or recorded after Shutdown
	Filtered uint64 // refused by the spam filter
	Written  uint64 // created or patched
	Failed   uint64 // given up: rejected by the server, out of tries, or abandoned at Shutdown
}

// Broadcaster queues events from its recorders and writes them, one at a
// time and in order, from a single worker goroutine.
type Broadcaster struct {
	sink   Sink
	scheme *runtime.Scheme
	clock  clock.Clock
	log    *slog.Logger
	opts   Options
	corr   *correlator // owned by the worker goroutine

	// queue is never closed. mu guards closed: enqueue checks it holding mu
	// shared, Shutdown sets it holding mu exclusively, so every accepted
	// event is queued ahead of the stop marker.
	mu     sync.RWMutex
	closed bool
	queue  chan item

	lastNanos                          atomic.Int64 // last timestamp used in an event name
	dropped, filtered, written, failed atomic.Uint64

	ctx       context.Context // the worker's; cancelled when Shutdown gives up
	cancel    context.CancelFunc
	abandoned atomic.Bool   // set with cancel: remaining events are skipped
	done      chan struct{} // closed when the worker returned
}

// item is an event to write, a flush marker or the stop marker.
type item struct {
	ev    *corev1.Event
	flush chan struct{} // non-nil: a flush marker, closed when reached
	stop  bool          // the worker returns on reaching it
}

// NewBroadcaster starts a broadcaster; call Shutdown to stop it.
func NewBroadcaster(opts Options) (*Broadcaster, error) {
	if opts.Sink == nil {
		return nil, errors.New("record: Options.Sink is required")
	}
	if opts.Scheme == nil {
		opts.Scheme = NewScheme()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.MaxTries <= 0 {
		opts.MaxTries = 12
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broadcaster{
		sink: opts.Sink, scheme: opts.Scheme, clock: opts.Clock, log: opts.Logger, opts: opts,
		corr:  newCorrelator(opts.Correlator, opts.Clock),
		queue: make(chan item, opts.QueueSize),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	go b.run()
	return b, nil
}

// NewRecorder returns a recorder whose events name source.
func (b *Broadcaster) NewRecorder(source corev1.EventSource) Recorder {
	return &recorder{b: b, source: source}
}

// NewComponentRecorder is NewRecorder with only a component name.
func (b *Broadcaster) NewComponentRecorder(component string) Recorder {
	return b.NewRecorder(corev1.EventSource{Component: component})
}

// Stats returns the counters so far.
func (b *Broadcaster) Stats() Stats {
	return Stats{Dropped: b.dropped.Load(), Filtered: b.filtered.Load(), Written: b.written.Load(), Failed: b.failed.Load()}
}

// enqueue queues ev without blocking; it is dropped (and counted) when the
// queue is full or the broadcaster is shut down.
func (b *Broadcaster) enqueue(ev *corev1.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if !b.closed {
		select {
		case b.queue <- item{ev: ev}:
			return
		default:
		}
	}
	n := b.dropped.Add(1)
	if n&(n-1) == 0 { // log the 1st, 2nd, 4th, 8th... drop
		b.log.Warn("event dropped: queue full or broadcaster shut down",
			"dropped", n, "queueSize", b.opts.QueueSize, "reason", ev.Reason, "object", ev.InvolvedObject.Name)
	}
}

// Flush waits until every event queued before the call has been written or
// given up. It fails if ctx ends first or the broadcaster was shut down
// with events abandoned.
func (b *Broadcaster) Flush(ctx context.Context) error {
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return b.stopped()
	}
	marker := make(chan struct{})
	select {
	case b.queue <- item{flush: marker}:
	case <-b.done:
		return b.stopped()
	case <-ctx.Done():
		return fmt.Errorf("record: flush: %w", ctx.Err())
	}
	select {
	case <-marker:
		return nil
	case <-b.done: // shut down meanwhile: Shutdown drained what we waited for
		return b.stopped()
	case <-ctx.Done():
		return fmt.Errorf("record: flush: %w", ctx.Err())
	}
}

// stopped is the error of a Flush that met a stopped worker: nil if the
// queue was drained, else the abandonment.
func (b *Broadcaster) stopped() error {
	<-b.done
	if b.abandoned.Load() {
		return errors.New("record: broadcaster shut down with events abandoned")
	}
	return nil
}

// Shutdown stops accepting events and writes those queued. If ctx ends
// first, the write in progress is cancelled, the rest are abandoned (counted
// as Failed) and ctx's error is returned. The worker has stopped when
// Shutdown returns. Later calls wait the same way.
func (b *Broadcaster) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	first := !b.closed
	b.closed = true
	b.mu.Unlock()
	if first {
		// Every event accepted before closed was set is ahead of this marker.
		select {
		case b.queue <- item{stop: true}:
		case <-ctx.Done():
			b.abandon()
			b.queue <- item{stop: true} // the worker now drains fast
		}
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		b.abandon()
		<-b.done
	}
	if b.abandoned.Load() {
		return fmt.Errorf("record: shutdown: events abandoned: %w", context.Cause(b.ctx))
	}
	return nil
}

// abandon cancels the write in progress and makes the worker skip the rest.
func (b *Broadcaster) abandon() {
	b.abandoned.Store(true)
	b.cancel()
}

// uniqueNanos returns now in Unix nanoseconds, or one more than the last
// value returned if that is not smaller, so event names never collide
// within a broadcaster even on a coarse or fake clock.
func (b *Broadcaster) uniqueNanos(now time.Time) int64 {
	n := now.UnixNano()
	for {
		last := b.lastNanos.Load()
		next := max(n, last+1)
		if b.lastNanos.CompareAndSwap(last, next) {
			return next
		}
	}
}

// run is the worker: it writes queued events in order until the queue is
// closed and drained.
func (b *Broadcaster) run() {
	defer close(b.done)
	defer b.cancel() // release the context; abandoned tells a cancel by Shutdown
	for {
		it := <-b.queue
		if it.stop {
			return
		}
		if it.flush != nil {
			close(it.flush)
			continue
		}
		if b.ctx.Err() != nil {
			b.failed.Add(1)
			continue
		}
		b.process(it.ev)
	}
}

// process correlates one event and writes it, retrying transport failures.
func (b *Broadcaster) process(ev *corev1.Event) {
	d := b.corr.correlate(ev)
	if d.skip {
		b.filtered.Add(1)
		return
	}
	for try := 1; ; try++ {
		stored, err := b.write(d)
		if err == nil {
			b.corr.written(d.key, stored)
			b.written.Add(1)
			return
		}
		var status *apierrors.StatusError
		switch {
		case b.ctx.Err() != nil:
			b.failed.Add(1)
			return
		case errors.As(err, &status):
			b.failed.Add(1)
			b.log.Warn("event rejected by the server; not retrying", "event", d.event.Name, "err", err)
			return
		case try >= b.opts.MaxTries:
			b.failed.Add(1)
			b.log.Error("event not written; giving up", "event", d.event.Name, "tries", try, "err", err)
			return
		}
		b.log.Debug("event write failed; will retry", "event", d.event.Name, "try", try, "err", err)
		if !b.sleep(b.retryWait(try)) {
			b.failed.Add(1)
			return
		}
	}
}

// write creates or patches; a patch of an event gone from the server
// creates it again with the accumulated count.
func (b *Broadcaster) write(d decision) (*corev1.Event, error) {
	if d.patch != nil {
		stored, err := b.sink.Patch(b.ctx, d.event, d.patch)
		if !apierrors.IsNotFound(err) {
			return stored, err
		}
		d.event.ResourceVersion = ""
	}
	return b.sink.Create(b.ctx, d.event)
}

// retryWait is a random fraction of RetryInterval before the first retry,
// RetryInterval after.
func (b *Broadcaster) retryWait(try int) time.Duration {
	if try == 1 {
		return time.Duration(rand.Int64N(int64(b.opts.RetryInterval)) + 1)
	}
	return b.opts.RetryInterval
}

// sleep waits d on the clock; false if the worker's context ended.
func (b *Broadcaster) sleep(d time.Duration) bool {
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-b.ctx.Done():
		return false
	}
}
