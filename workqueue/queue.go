package workqueue

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Interface is the contract every queue in this package meets. See the
// package documentation for the Get/Done protocol.
type Interface[T comparable] interface {
	// Add marks item as needing processing. If item is already queued it is
	// not queued a second time. If item is being processed, it is queued again
	// once the worker calls Done. Add after ShutDown is ignored.
	Add(item T)
	// Len reports how many items are queued and ready for Get. Items being
	// processed and items waiting for a delay are not counted.
	Len() int
	// Get blocks until an item is ready or the queue is shut down. It returns
	// shutdown=true only once the queue is shut down and empty: items queued
	// before ShutDown are still handed out. The caller must call Done(item)
	// exactly once for every item Get returns.
	Get() (item T, shutdown bool)
	// Done tells the queue processing of item finished. If item was added
	// again meanwhile, it is queued again now. Done for an item not being
	// processed is a no-op.
	Done(item T)
	// ShutDown makes Get return shutdown=true once the queue is empty and
	// stops background goroutines. It does not wait for workers.
	ShutDown()
	// ShutDownWithDrain is ShutDown that also blocks until every item handed
	// out by Get has been marked Done. Workers must keep calling Get until it
	// reports shutdown, or the drain never ends.
	ShutDownWithDrain()
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
	ShuttingDown() bool
}

// DelayingInterface is an Interface that can also add an item later.
type DelayingInterface[T comparable] interface {
	Interface[T]
	// AddAfter adds item once d has elapsed on the queue's clock. d <= 0 is
	// Add. If item already waits, the earlier of the two ready times wins.
	// AddAfter after ShutDown is ignored.
	AddAfter(item T, d time.Duration)
}

// AddOpts tunes a single AddWithOpts call.
type AddOpts struct {
	// Priority orders ready items: Get returns the highest priority first and
	// is FIFO within one priority. The default is 0. Informer-driven
	// controllers add initial-list and resync events with LowPriority so live
	// events overtake them. Adding an already queued item with a higher
	// priority raises it; a lower priority never lowers it. The queue keeps
	// one internal level per distinct priority ever used and never drops
	// one, so use a handful of values (such as 0 and LowPriority), not an
	// unbounded range.
	Priority int
	// After, if positive, delays the add like AddAfter.
	After time.Duration
}

// LowPriority is the priority we recommend for events that do not signal a
// change a user is waiting for: the initial list and periodic resyncs.
const LowPriority = -100

// Config configures a queue. The zero value is valid: an unnamed queue on the
// real clock without metrics.
type Config struct {
	// Name labels the queue's metrics. Metrics are recorded only for a named
	// queue with a MetricsProvider.
	Name string
	// Clock drives delays, rate limits and metrics; nil means the real clock.
	Clock clock.WithTicker
	// MetricsProvider creates the queue's metrics; nil means none.
	MetricsProvider MetricsProvider
	// MetricsUpdatePeriod is how often the unfinished-work gauges are
	// refreshed; zero means 500ms.
	MetricsUpdatePeriod time.Duration
}

const (
	flagDirty      uint8 = 1 << iota // needs processing (again)
	flagProcessing                   // handed out by Get, Done not yet called
)

// itemState is the queue's book-keeping for one item. It exists exactly while
// the item is dirty or processing or has failures recorded, and is recycled
// afterwards.
type itemState[T comparable] struct {
	item T
	// seq identifies the one live entry of this state in the levels; entries
	// carrying an older seq are stale and skipped. It only ever grows (modulo
	// 2^32), also across recycling, so a stale entry never matches a reused
	// state.
	seq uint32
	// prio is the priority the item is (or will be, on Done) queued at.
	prio  int32
	flags uint8
	// failures is the item's failure count kept for a bound
	// ExponentialRateLimiter (see bindQueue): When calls since the last
	// Forget, saturating at math.MaxInt32. Zero unless a limiter is bound.
	failures int32
}

// entry is one slot of a level's FIFO.
type entry[T comparable] struct {
	st  *itemState[T]
	seq uint32
}

// level is the FIFO of one priority.
type level[T comparable] struct {
	prio int32
	fifo ring[entry[T]]
}

// Queue is a work queue with de-duplication, priorities and delayed adds. It
// implements DelayingInterface. Create it with New or NewWithConfig.
type Queue[T comparable] struct {
	clock   clock.WithTicker
	metrics *queueMetrics

	mu   sync.Mutex
	cond sync.Cond // L is &mu; signalled when an entry is pushed, broadcast on ShutDown
	// drained (L is &mu) is broadcast when draining may end. It is separate
	// from cond so that a Signal meant for a Get never wakes the drainer.
	drained sync.Cond
	// states holds an itemState for every item that is dirty or processing
	// or has failures recorded. An item is queued iff its flags are dirty and
	// not processing; then exactly one entry in levels carries its current
	// seq.
	states map[T]*itemState[T]
	// levels holds the FIFOs ordered by descending priority. They may hold
	// stale entries (see itemState.seq); stale entries are dropped by Get.
	levels []level[T]
	// queued counts the items that are queued (not entries: stale excluded).
	queued int
	// processing counts the items with flagProcessing.
	processing int
	// deletes counts removals from states since it was last rebuilt; see
	// compactStates.
	deletes int
	// addedAt and startedAt hold the times the latency metrics need: when a
	// dirty item was added and when a processing item was handed out. Both
	// are nil without metrics, keeping itemState small.
	addedAt, startedAt map[*itemState[T]]time.Time
	// free recycles itemStates so steady-state traffic does not allocate.
	free []*itemState[T]
	// shuttingDown is set once by ShutDown; from then on Add is ignored.
	shuttingDown bool
	// draining is set while ShutDownWithDrain waits for processing to hit 0.
	draining bool

	shut     atomic.Bool   // mirrors shuttingDown for lock-free checks
	stopCh   chan struct{} // closed by the first ShutDown
	stopOnce sync.Once
	wg       sync.WaitGroup // background goroutines

	delay delayer[T]
	// in holds adds (and, for a bound limiter, zero-delay retries and
	// Forgets) not yet applied; see intake. Used only without metrics, whose
	// latencies need the time of each add.
	in intake[T]
}

// New returns an unnamed queue on the real clock without metrics.
func New[T comparable]() *Queue[T] { return NewWithConfig[T](Config{}) }

// NewWithConfig returns a queue configured by cfg. If metrics are configured
// a background goroutine refreshes them until ShutDown.
func NewWithConfig[T comparable](cfg Config) *Queue[T] {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	q := &Queue[T]{
		clock:  cfg.Clock,
		states: make(map[T]*itemState[T]),
		stopCh: make(chan struct{}),
	}
	q.cond.L = &q.mu
	q.drained.L = &q.mu
	q.metrics = newQueueMetrics(cfg.Name, cfg.MetricsProvider)
	if q.metrics != nil {
		q.addedAt = make(map[*itemState[T]]time.Time)
		q.startedAt = make(map[*itemState[T]]time.Time)
	}
	q.delay.init()
	if q.metrics != nil {
		period := cfg.MetricsUpdatePeriod
		if period <= 0 {
			period = 500 * time.Millisecond
		}
		q.wg.Add(1)
		go q.updateMetricsLoop(period)
	}
	return q
}

// Add implements Interface.
func (q *Queue[T]) Add(item T) {
	if q.metrics == nil {
		q.enqueue(item, opAdd)
		return
	}
	q.lockDrained()
	q.addLocked(item, 0)
	q.mu.Unlock()
}

// lockDrained takes q.mu and applies the pending adds, so the caller sees
// every Add that happened before it.
func (q *Queue[T]) lockDrained() {
	q.mu.Lock()
	q.drainLocked()
}

// AddWithOpts adds items with the given options; see AddOpts.
func (q *Queue[T]) AddWithOpts(opts AddOpts, items ...T) {
	if opts.After > 0 {
		for _, it := range items {
			q.addAfter(it, opts.After, opts.Priority)
		}
		return
	}
	q.lockDrained()
	for _, it := range items {
		q.addLocked(it, opts.Priority)
	}
	q.mu.Unlock()
}

// clampPriority maps an AddOpts priority onto the int32 the queue stores.
func clampPriority(p int) int32 {
	return int32(min(max(p, math.MinInt32), math.MaxInt32))
}

func (q *Queue[T]) addLocked(item T, priority int) {
	if q.shuttingDown {
		return
	}
	q.addStateLocked(q.stateLocked(item), clampPriority(priority))
}

// stateLocked returns item's state, creating it if needed. The caller must
// make the state dirty or give it failures, or release it.
func (q *Queue[T]) stateLocked(item T) *itemState[T] {
	st := q.states[item]
	if st == nil {
		st = q.newState(item)
		q.states[item] = st
	}
	return st
}

// addStateLocked marks st dirty at prio, queueing it unless it is being
// processed. The queue must not be shutting down.
func (q *Queue[T]) addStateLocked(st *itemState[T], prio int32) {
	switch {
	case st.flags&flagDirty == 0:
		st.flags |= flagDirty
		st.prio = prio
		if q.metrics != nil {
			q.addedAt[st] = q.clock.Now()
			q.metrics.added()
		}
		if st.flags&flagProcessing == 0 {
			q.push(st)
		}
	case prio > st.prio:
		st.prio = prio
		if st.flags&flagProcessing == 0 {
			// Raise: the old entry turns stale, the new one is live.
			q.queued--
			q.push(st)
		}
	}
}

// push appends a live entry for st at st.prio and wakes one Get.
func (q *Queue[T]) push(st *itemState[T]) {
	st.seq++
	q.levelFor(st.prio).fifo.push(entry[T]{st: st, seq: st.seq})
	q.queued++
	q.cond.Signal()
}

// levelFor returns the level of prio, creating it in order if needed.
func (q *Queue[T]) levelFor(prio int32) *level[T] {
	i := 0
	for ; i < len(q.levels); i++ {
		if q.levels[i].prio == prio {
			return &q.levels[i]
		}
		if q.levels[i].prio < prio {
			break
		}
	}
	q.levels = append(q.levels, level[T]{})
	copy(q.levels[i+1:], q.levels[i:])
	q.levels[i] = level[T]{prio: prio}
	return &q.levels[i]
}

func (q *Queue[T]) newState(item T) *itemState[T] {
	if n := len(q.free); n > 0 {
		st := q.free[n-1]
		q.free = q.free[:n-1]
		st.item = item
		return st
	}
	return &itemState[T]{item: item}
}

func (q *Queue[T]) release(st *itemState[T]) {
	var zero T
	delete(q.states, st.item)
	if q.deletes++; q.deletes >= 4096 && q.deletes > 8*len(q.states) {
		q.compactStates()
	}
	st.item, st.flags, st.prio, st.failures = zero, 0, 0, 0
	q.free = append(q.free, st)
}

// compactStates copies the live states into a fresh map. A map that keeps
// inserting new keys and deleting old ones accumulates deleted-slot markers
// that lengthen every lookup; the copy costs O(live) and happens only after
// many times that many deletes.
func (q *Queue[T]) compactStates() {
	m := make(map[T]*itemState[T], len(q.states))
	for k, v := range q.states {
		m[k] = v
	}
	q.states, q.deletes = m, 0
}

// Len implements Interface.
func (q *Queue[T]) Len() int {
	q.lockDrained()
	defer q.mu.Unlock()
	return q.queued
}

// Get implements Interface.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.lockDrained()
	for q.queued == 0 && !q.shuttingDown {
		q.waitLocked()
		q.drainLocked()
	}
	if q.queued == 0 {
		q.mu.Unlock()
		return item, true
	}
	st := q.popLocked()
	st.flags = flagProcessing
	q.processing++
	if q.metrics != nil {
		now := q.clock.Now()
		q.metrics.got(now.Sub(q.addedAt[st]))
		delete(q.addedAt, st)
		q.startedAt[st] = now
	}
	item = st.item
	q.mu.Unlock()
	return item, false
}

// popLocked removes and returns the first live entry's state. queued > 0.
func (q *Queue[T]) popLocked() *itemState[T] {
	for i := range q.levels {
		f := &q.levels[i].fifo
		for f.len() > 0 {
			e := f.pop()
			if e.seq == e.st.seq && e.st.flags == flagDirty {
				q.queued--
				return e.st
			}
		}
	}
	panic("workqueue: queued count is positive but no live entry exists")
}

// Done implements Interface.
func (q *Queue[T]) Done(item T) {
	q.lockDrained()
	st := q.states[item]
	if st == nil || st.flags&flagProcessing == 0 {
		q.mu.Unlock()
		return
	}
	st.flags &^= flagProcessing
	q.processing--
	if q.metrics != nil {
		q.metrics.done(q.clock.Since(q.startedAt[st]))
		delete(q.startedAt, st)
	}
	if st.flags&flagDirty != 0 {
		q.push(st)
	} else if st.failures == 0 {
		q.release(st)
	}
	if q.processing == 0 && q.draining {
		q.drained.Broadcast()
	}
	q.mu.Unlock()
}

// ShutDown implements Interface.
func (q *Queue[T]) ShutDown() {
	q.shutDown(false)
}

// ShutDownWithDrain implements Interface.
func (q *Queue[T]) ShutDownWithDrain() {
	q.shutDown(true)
}

func (q *Queue[T]) shutDown(drain bool) {
	q.stopOnce.Do(func() { close(q.stopCh) })
	q.mu.Lock()
	q.closeIntakeLocked()
	q.shuttingDown = true
	q.shut.Store(true)
	q.draining = drain
	q.cond.Broadcast()
	q.drained.Broadcast() // a plain ShutDown ends a drain in progress
	for drain && q.draining && q.processing > 0 {
		q.drained.Wait()
	}
	q.mu.Unlock()
	q.wg.Wait()
}

// ShuttingDown implements Interface.
func (q *Queue[T]) ShuttingDown() bool {
	return q.shut.Load()
}
