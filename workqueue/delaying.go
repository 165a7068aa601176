package workqueue

import (
	"container/heap"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// delayer holds the items waiting for AddAfter. A single goroutine, started
// on the first delayed add and stopped by ShutDown, moves them into the queue
// when their time comes on the queue's clock.
type delayer[T comparable] struct {
	mu sync.Mutex
	// waiting is a min-heap on readyAt; known indexes it by item. Every item
	// appears at most once in both, and the two always hold the same items.
	waiting waitHeap[T]
	known   map[T]*waitEntry[T]
	// wake is signalled (non-blocking, capacity 1) when a new earliest entry
	// may shorten the loop's current wait.
	wake  chan struct{}
	start sync.Once
	// order numbers entries in insertion order.
	order uint64
}

type waitEntry[T comparable] struct {
	item    T
	readyAt time.Time
	prio    int
	order   uint64 // tie-break: FIFO among equal readyAt
	index   int    // position in waiting, kept by the heap methods
}

func (d *delayer[T]) init() {
	d.known = make(map[T]*waitEntry[T])
	d.wake = make(chan struct{}, 1)
}

// AddAfter implements DelayingInterface.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	q.addAfter(item, d, 0)
}

func (q *Queue[T]) addAfter(item T, d time.Duration, prio int) {
	if q.shut.Load() {
		return
	}
	if q.metrics != nil {
		q.metrics.retried()
	}
	if d <= 0 {
		if q.metrics == nil && prio == 0 {
			q.enqueue(item, opAdd)
			return
		}
		q.lockDrained()
		q.addLocked(item, prio)
		q.mu.Unlock()
		return
	}
	readyAt := q.clock.Now().Add(d)
	dl := &q.delay
	dl.mu.Lock()
	if e, ok := dl.known[item]; ok {
		if prio > e.prio {
			e.prio = prio
		}
		if readyAt.Before(e.readyAt) {
			e.readyAt = readyAt
			heap.Fix(&dl.waiting, e.index)
		}
	} else {
		dl.order++
		e := &waitEntry[T]{item: item, readyAt: readyAt, prio: prio, order: dl.order}
		heap.Push(&dl.waiting, e)
		dl.known[item] = e
	}
	earliest := dl.waiting[0].item == item
	dl.mu.Unlock()
	dl.start.Do(func() {
		q.wg.Add(1)
		go q.delayLoop()
	})
	if earliest {
		select {
		case dl.wake <- struct{}{}:
		default:
		}
	}
}

// delayLoop moves ready items into the queue until ShutDown.
func (q *Queue[T]) delayLoop() {
	defer q.wg.Done()
	for {
		next := q.moveReady()
		if !q.waitDelay(next) {
			return
		}
	}
}

// moveReady adds every waiting item whose time has come, earliest first, and
// returns when the next one is due (zero if none waits).
func (q *Queue[T]) moveReady() time.Time {
	dl := &q.delay
	dl.mu.Lock()
	defer dl.mu.Unlock()
	now := q.clock.Now()
	if len(dl.waiting) == 0 || dl.waiting[0].readyAt.After(now) {
		return dl.next()
	}
	// Holding dl.mu while taking q.mu keeps the move atomic for observers;
	// no path takes the two locks in the other order.
	q.lockDrained()
	for len(dl.waiting) > 0 && !dl.waiting[0].readyAt.After(now) {
		e := heap.Pop(&dl.waiting).(*waitEntry[T])
		delete(dl.known, e.item)
		q.addLocked(e.item, e.prio)
	}
	q.mu.Unlock()
	return dl.next()
}

func (d *delayer[T]) next() time.Time {
	if len(d.waiting) == 0 {
		return time.Time{}
	}
	return d.waiting[0].readyAt
}

// waitDelay blocks until next (forever if zero), an earlier entry arrives,
// or ShutDown; it reports false on ShutDown.
func (q *Queue[T]) waitDelay(next time.Time) bool {
	var timerC <-chan time.Time
	if !next.IsZero() {
		t, ok := q.armTimer(next)
		if !ok {
			return true // due already
		}
		defer t.Stop()
		timerC = t.C()
	}
	select {
	case <-q.stopCh:
		return false
	case <-q.delay.wake:
	case <-timerC:
	}
	return true
}

// armTimer returns a timer that fires at next, or false if next has passed.
// Timers take a relative duration, so if the clock moves between reading it
// and arming (a fake clock stepped by a test), the timer would fire late;
// re-arming until the clock stood still makes it exact. A real clock always
// moves, so after a few tries we accept its nanoseconds of drift.
func (q *Queue[T]) armTimer(next time.Time) (clock.Timer, bool) {
	for attempt := 0; ; attempt++ {
		now := q.clock.Now()
		if !now.Before(next) {
			return nil, false
		}
		t := q.clock.NewTimer(next.Sub(now))
		if attempt >= 2 || q.clock.Now().Equal(now) {
			return t, true
		}
		t.Stop()
	}
}

// waitHeap orders waitEntries by readyAt; it implements heap.Interface.
type waitHeap[T comparable] []*waitEntry[T]

func (h waitHeap[T]) Len() int { return len(h) }
func (h waitHeap[T]) Less(i, j int) bool {
	if h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].order < h[j].order
	}
	return h[i].readyAt.Before(h[j].readyAt)
}
func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *waitHeap[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
