package flowcontrol

import (
	"container/list"
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// estimatedServiceTime is G, the service time fair queuing assumes for a
// request before it finishes (kube-apiserver's figure).
const estimatedServiceTime = 3 * time.Millisecond

// Rejection reasons, as the rejected_requests_total metric labels them.
const (
	ReasonQueueFull        = "queue-full"
	ReasonConcurrencyLimit = "concurrency-limit"
	ReasonTimeout          = "time-out"
	ReasonCancelled        = "cancelled"
)

// queueConfig is how a priority level limits: its seats and, when it
// queues, its queues.
type queueConfig struct {
	exempt bool
	// limit is the number of seats requests may occupy at once.
	limit int
	// queues is 0 for a level that rejects rather than queues.
	queues, handSize, queueLengthLimit int
}

// queueSet is the state of one priority level: the requests executing
// and those waiting, in queues served by fair queuing in virtual time.
//
// Virtual time R counts seat-seconds of service that each active queue
// has been entitled to since the set began: it advances at
// min(seats demanded, limit) / active queues per real second. Every
// queue keeps nextDispatchR, the virtual time at which its head request
// starts; a dispatch picks the queue whose head finishes first in
// virtual time (nextDispatchR + seats*G) and advances that queue by the
// head's work. When a request finishes, its queue gets back the
// difference between the work assumed (seats*G) and the work done.
type queueSet struct {
	level   string
	clock   clock.PassiveClock
	metrics *Metrics

	mu           sync.Mutex
	cfg          queueConfig
	queues       []*queue
	currentR     float64
	lastRealTime time.Time
	robin        int
	enqueues     int
	executing    int
	seatsInUse   int
	waiting      int
	seatsWaiting int
}

type queue struct {
	index         int
	waiting       list.List // of *request, oldest first
	waitingSeats  int
	executing     int
	seatsInUse    int
	nextDispatchR float64
}

func (q *queue) active() bool { return q.waiting.Len() > 0 || q.executing > 0 }

// request is one request's passage through a queue set.
type request struct {
	fs, flow string
	seats    int
	arrival  time.Time
	arrivalR float64
	queue    *queue
	elem     *list.Element
	start    time.Time
	// decided is closed once the request is dispatched or rejected;
	// execute and reason say which.
	decided chan struct{}
	isSet   bool
	execute bool
	reason  string
}

func (r *request) work() float64 { return float64(r.seats) * estimatedServiceTime.Seconds() }

func newQueueSet(level string, c clock.PassiveClock, m *Metrics) *queueSet {
	return &queueSet{level: level, clock: c, metrics: m, lastRealTime: c.Now()}
}

// configure applies a level's (new) configuration: more queues are added
// at once, surplus queues go when they are empty, and a higher limit
// dispatches waiting requests at once.
func (qs *queueSet) configure(cfg queueConfig) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	qs.cfg = cfg
	for len(qs.queues) < cfg.queues {
		qs.queues = append(qs.queues, &queue{index: len(qs.queues), nextDispatchR: qs.currentR})
	}
	qs.dropSurplusQueuesLocked()
	qs.dispatchAsMuchAsPossibleLocked()
}

// errRejected is returned by start for a request not admitted; its
// reason is in the request.
var errRejected = errors.New("rejected")

// start admits a request: at once when the level is exempt or has
// room, else into the shortest queue of its hand, where it waits until
// fair queuing dispatches it or waitCtx ends. It returns the request,
// executing, or errRejected with the reason set.
func (qs *queueSet) start(waitCtx context.Context, fs, flow string, seats int, hash uint64) (*request, error) {
	qs.mu.Lock()
	qs.syncTimeLocked()
	now := qs.clock.Now()
	req := &request{fs: fs, flow: flow, seats: seats, arrival: now, arrivalR: qs.currentR, decided: make(chan struct{})}
	if qs.cfg.exempt || qs.cfg.queues == 0 {
		defer qs.mu.Unlock()
		if !qs.cfg.exempt && !qs.canAccommodateLocked(seats) {
			qs.rejectLocked(req, ReasonConcurrencyLimit)
			return req, errRejected
		}
		qs.executeLocked(req, nil)
		return req, nil
	}
	q := qs.queues[qs.shuffleShardLocked(hash)]
	if qs.seatsInUse >= qs.cfg.limit && q.waiting.Len() >= qs.cfg.queueLengthLimit {
		qs.rejectLocked(req, ReasonQueueFull)
		qs.mu.Unlock()
		return req, errRejected
	}
	qs.enqueueLocked(req, q)
	qs.dispatchAsMuchAsPossibleLocked()
	qs.mu.Unlock()
	select {
	case <-req.decided:
	case <-waitCtx.Done():
		qs.mu.Lock()
		if !req.isSet {
			qs.syncTimeLocked()
			qs.dequeueLocked(req)
			reason := ReasonCancelled
			if errors.Is(waitCtx.Err(), context.DeadlineExceeded) {
				reason = ReasonTimeout
			}
			qs.rejectLocked(req, reason)
			qs.metrics.waited(qs.level, fs, false, qs.clock.Since(req.arrival))
		}
		qs.mu.Unlock()
	}
	if !req.execute {
		return req, errRejected
	}
	return req, nil
}

// finish ends an executing request and dispatches what its seats allow.
func (qs *queueSet) finish(req *request) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	qs.executing--
	qs.seatsInUse -= req.seats
	qs.metrics.executing(qs.level, req.fs, -1, -req.seats)
	if q := req.queue; q != nil {
		q.executing--
		q.seatsInUse -= req.seats
		served := qs.clock.Since(req.start)
		q.nextDispatchR -= float64(req.seats) * (estimatedServiceTime - served).Seconds()
		qs.boundNextDispatchLocked(q)
		qs.dropSurplusQueuesLocked()
	}
	qs.dispatchAsMuchAsPossibleLocked()
}

// syncTimeLocked advances virtual time for the real time elapsed since
// the last change, at the rate the state since then gives.
func (qs *queueSet) syncTimeLocked() {
	now := qs.clock.Now()
	elapsed := now.Sub(qs.lastRealTime)
	qs.lastRealTime = now
	active, demanded := 0, 0
	for _, q := range qs.queues {
		if q.active() {
			active++
		}
		demanded += q.seatsInUse + q.waitingSeats
	}
	if active == 0 {
		return
	}
	qs.currentR += math.Min(float64(demanded), float64(qs.cfg.limit)) / float64(active) * elapsed.Seconds()
	qs.metrics.setCurrentR(qs.level, qs.currentR)
}

// shuffleShardLocked deals the flow's hand of queues and picks the one
// with the least waiting work, starting the scan at a rotating offset so
// that ties do not always favour the same queue.
func (qs *queueSet) shuffleShardLocked(hash uint64) int {
	var buf [maxHandSize]int
	hand := deal(hash, qs.cfg.queues, min(qs.cfg.handSize, qs.cfg.queues), buf[:0])
	offset := qs.enqueues % len(hand)
	qs.enqueues++
	best, bestSeats := -1, math.MaxInt
	for i := range hand {
		idx := hand[(offset+i)%len(hand)]
		if s := qs.queues[idx].waitingSeats; s < bestSeats {
			best, bestSeats = idx, s
		}
	}
	return best
}

func (qs *queueSet) enqueueLocked(req *request, q *queue) {
	if !q.active() {
		q.nextDispatchR = qs.newcomerStartLocked()
		req.arrivalR = q.nextDispatchR
	}
	req.queue = q
	req.elem = q.waiting.PushBack(req)
	q.waitingSeats += req.seats
	qs.waiting++
	qs.seatsWaiting += req.seats
	qs.metrics.enqueued(qs.level, req.fs, 1, req.seats, q.waiting.Len())
}

// newcomerStartLocked is where a queue that becomes active starts in
// virtual time: the current virtual time R, or, when active queues (with
// requests waiting or executing) lag behind R, the earliest of their
// starts (start-time fair queuing's virtual time: the start of what is
// served next). Queues lag
// behind R after a request ran far longer than the assumed G: R advanced
// for every active queue, only the slow request's queue was charged, and
// the others (often the same flow's other queues of its hand) are owed
// that time. Starting a newcomer at R would put it behind all that
// catching up, a wait as long as the slow request; starting it among them
// dispatches it after at most one request of each queue it ties with.
func (qs *queueSet) newcomerStartLocked() float64 {
	start := qs.currentR
	for _, q := range qs.queues {
		if q.active() && q.nextDispatchR < start {
			start = q.nextDispatchR
		}
	}
	return start
}

// dequeueLocked takes a waiting request out of its queue.
func (qs *queueSet) dequeueLocked(req *request) {
	q := req.queue
	q.waiting.Remove(req.elem)
	q.waitingSeats -= req.seats
	qs.waiting--
	qs.seatsWaiting -= req.seats
	qs.metrics.enqueued(qs.level, req.fs, -1, -req.seats, -1)
	qs.boundNextDispatchLocked(q)
}

func (qs *queueSet) rejectLocked(req *request, reason string) {
	req.isSet, req.execute, req.reason = true, false, reason
	close(req.decided)
	qs.metrics.rejected(qs.level, req.fs, reason)
}

// executeLocked marks a request executing, from queue q or none.
func (qs *queueSet) executeLocked(req *request, q *queue) {
	req.start = qs.clock.Now()
	qs.executing++
	qs.seatsInUse += req.seats
	if q != nil {
		q.executing++
		q.seatsInUse += req.seats
	}
	req.isSet, req.execute = true, true
	close(req.decided)
	qs.metrics.dispatched(qs.level, req.fs, req.seats, req.start.Sub(req.arrival))
}

// canAccommodateLocked reports whether seats more fit under the limit. A
// request wider than the whole limit runs alone, once nothing else does.
func (qs *queueSet) canAccommodateLocked(seats int) bool {
	if seats > qs.cfg.limit {
		return qs.executing == 0
	}
	return qs.seatsInUse+seats <= qs.cfg.limit
}

func (qs *queueSet) dispatchAsMuchAsPossibleLocked() {
	for qs.waiting > 0 && qs.seatsInUse < qs.cfg.limit && qs.dispatchLocked() {
	}
	if qs.waiting > 0 && qs.executing == 0 {
		qs.dispatchLocked() // a request wider than the limit runs alone
	}
}

// dispatchLocked starts the head of the queue whose head finishes first
// in virtual time, scanning round-robin from the queue after the last
// one served so that ties rotate. It reports whether it started one.
func (qs *queueSet) dispatchLocked() bool {
	var best *queue
	bestFinish := math.Inf(1)
	n := len(qs.queues)
	for i := 1; i <= n; i++ {
		q := qs.queues[(qs.robin+i)%n]
		head := q.waiting.Front()
		if head == nil {
			continue
		}
		if finish := q.nextDispatchR + head.Value.(*request).work(); finish < bestFinish {
			best, bestFinish = q, finish
		}
	}
	if best == nil {
		return false
	}
	req := best.waiting.Front().Value.(*request)
	if !qs.canAccommodateLocked(req.seats) {
		return false
	}
	best.waiting.Remove(req.elem)
	best.waitingSeats -= req.seats
	qs.waiting--
	qs.seatsWaiting -= req.seats
	qs.metrics.enqueued(qs.level, req.fs, -1, -req.seats, -1)
	qs.robin = best.index
	best.nextDispatchR += req.work()
	qs.executeLocked(req, best)
	qs.metrics.waited(qs.level, req.fs, true, req.start.Sub(req.arrival))
	qs.boundNextDispatchLocked(best)
	return true
}

// boundNextDispatchLocked keeps a queue from banking service: its head
// never starts in virtual time before it arrived.
func (qs *queueSet) boundNextDispatchLocked(q *queue) {
	head := q.waiting.Front()
	if head == nil {
		return
	}
	if r := head.Value.(*request).arrivalR; q.nextDispatchR < r {
		q.nextDispatchR = r
	}
}

// dropSurplusQueuesLocked removes empty queues beyond the configured
// number, from the end (a lowered queue count deals no new requests to
// them).
func (qs *queueSet) dropSurplusQueuesLocked() {
	for len(qs.queues) > qs.cfg.queues && !qs.queues[len(qs.queues)-1].active() {
		qs.queues = qs.queues[:len(qs.queues)-1]
	}
	if len(qs.queues) > 0 {
		qs.robin %= len(qs.queues)
	} else {
		qs.robin = 0
	}
}

// counts returns the numbers waiting and executing, for tests.
func (qs *queueSet) counts() (waiting, executing, seats int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.waiting, qs.executing, qs.seatsInUse
}
