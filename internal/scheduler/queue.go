package scheduler

import (
	"container/heap"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// location says which part of the queue holds a queuedPod.
type location int

const (
	inActive location = iota + 1
	inBackoff
	inUnschedulable
	// inFlight: popped, being scheduled or bound; the pod comes back with
	// requeueUnschedulable or requeueBackoff, or leaves with done.
	inFlight
)

// queuedPod is a pending pod known to the queue.
type queuedPod struct {
	// pod and demand are the latest object from the informer and its
	// demand; guarded by the queue's mutex (Pop hands out a snapshot).
	pod    *corev1.Pod
	demand podDemand
	// attempts counts scheduling attempts (Pops) so far; it sets the
	// backoff.
	attempts int
	// seq orders pods of equal priority in the active heap: assigned anew
	// on every entry, so the active queue is FIFO per priority.
	seq uint64
	// backoffUntil is when the backoff of the last failure ends.
	backoffUntil time.Time
	// unschedulableSince is when the pod was parked as unschedulable.
	unschedulableSince time.Time
	where              location
	// index is the position in the active or backoff heap.
	index int
	// changed records, while in flight, an update of the pod's spec: a
	// failure then goes to backoff rather than to the unschedulable set.
	changed bool
	// deleted records that the pod was deleted (or bound by someone) while
	// in flight: it is not requeued.
	deleted bool
}

func (qp *queuedPod) priority() int32 {
	if p := qp.pod.Spec.Priority; p != nil {
		return *p
	}
	return 0
}

// podHeap is a binary heap of queuedPods ordered by less; it keeps each
// pod's index current.
type podHeap struct {
	items []*queuedPod
	less  func(a, b *queuedPod) bool
}

func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *podHeap) Push(x any) {
	qp := x.(*queuedPod)
	qp.index = len(h.items)
	h.items = append(h.items, qp)
}
func (h *podHeap) Pop() any {
	n := len(h.items) - 1
	qp := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	return qp
}

// schedulingQueue is kube-scheduler's priority queue: an active heap
// (priority, then FIFO), a backoff heap (by end of backoff) and a set of
// unschedulable pods waiting for a cluster change. Safe for concurrent use.
//
// Invariants: every pod in pods is in exactly one of active, backoff,
// unschedulable or in flight, as its where says; a pod is known at most
// once (by UID).
type schedulingQueue struct {
	clock                      clock.Clock
	initialBackoff, maxBackoff time.Duration

	mu sync.Mutex
	// cond is signalled when active gains a pod or the queue closes.
	cond          *sync.Cond
	pods          map[types.UID]*queuedPod
	active        podHeap
	backoff       podHeap
	unschedulable map[types.UID]*queuedPod
	seq           uint64
	// cycle counts Pops; moveCycle is the cycle of the latest move
	// request. A pod popped at a cycle <= moveCycle failed while the
	// cluster changed, so it is not parked as unschedulable.
	cycle, moveCycle int64
	closed           bool
}

func newSchedulingQueue(clk clock.Clock, initialBackoff, maxBackoff time.Duration) *schedulingQueue {
	q := &schedulingQueue{clock: clk, initialBackoff: initialBackoff, maxBackoff: maxBackoff,
		pods: map[types.UID]*queuedPod{}, unschedulable: map[types.UID]*queuedPod{}, moveCycle: -1}
	q.cond = sync.NewCond(&q.mu)
	q.active.less = func(a, b *queuedPod) bool {
		if pa, pb := a.priority(), b.priority(); pa != pb {
			return pa > pb
		}
		return a.seq < b.seq
	}
	q.backoff.less = func(a, b *queuedPod) bool { return a.backoffUntil.Before(b.backoffUntil) }
	return q
}

// addOrUpdate records the latest state of a pending pod: a new pod enters
// the active queue; a known one gets the new object, and when specChanged
// an unschedulable pod is moved out (to backoff while its backoff lasts).
func (q *schedulingQueue) addOrUpdate(pod *corev1.Pod, d podDemand, specChanged bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[pod.UID]
	if qp == nil {
		qp = &queuedPod{pod: pod, demand: d}
		q.pods[pod.UID] = qp
		q.toActive(qp)
		return
	}
	qp.pod, qp.demand = pod, d
	switch qp.where {
	case inActive:
		heap.Fix(&q.active, qp.index)
	case inUnschedulable:
		if specChanged {
			q.moveOut(qp)
		}
	case inFlight:
		qp.changed = qp.changed || specChanged
	}
}

// remove drops a pod (deleted, or bound): it is never popped again; a pod
// in flight is marked so that it is not requeued.
func (q *schedulingQueue) remove(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qp := q.pods[uid]
	if qp == nil {
		return
	}
	delete(q.pods, uid)
	switch qp.where {
	case inActive:
		heap.Remove(&q.active, qp.index)
	case inBackoff:
		heap.Remove(&q.backoff, qp.index)
	case inUnschedulable:
		delete(q.unschedulable, uid)
	case inFlight:
		qp.deleted = true
	}
}

// pop waits for an active pod and returns it with a snapshot of its
// object and demand and the scheduling cycle; ok is false once closed.
func (q *schedulingQueue) pop() (qp *queuedPod, pod *corev1.Pod, d podDemand, cycle int64, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.active.Len() == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, nil, podDemand{}, 0, false
	}
	qp = heap.Pop(&q.active).(*queuedPod)
	qp.where, qp.changed = inFlight, false
	qp.attempts++
	q.cycle++
	return qp, qp.pod, qp.demand, q.cycle, true
}

// done forgets a pod that was bound (or that needs no scheduling).
func (q *schedulingQueue) done(qp *queuedPod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pods[qp.pod.UID] == qp {
		delete(q.pods, qp.pod.UID)
	}
}

// requeueUnschedulable takes back a pod that fit no node in the given
// cycle: it waits in the unschedulable set for a cluster change, unless
// one happened (or the pod changed) while it was in flight, in which case
// it only backs off.
func (q *schedulingQueue) requeueUnschedulable(qp *queuedPod, cycle int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp.deleted || qp.where != inFlight {
		return
	}
	now := q.clock.Now()
	qp.backoffUntil = now.Add(q.backoffFor(qp.attempts))
	if qp.changed || q.moveCycle >= cycle {
		q.moveOut(qp)
		return
	}
	qp.where, qp.unschedulableSince = inUnschedulable, now
	q.unschedulable[qp.pod.UID] = qp
}

// requeueBackoff takes back a pod whose attempt failed with an error (a
// binding refused): it is retried after its backoff.
func (q *schedulingQueue) requeueBackoff(qp *queuedPod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp.deleted || qp.where != inFlight {
		return
	}
	qp.backoffUntil = q.clock.Now().Add(q.backoffFor(qp.attempts))
	q.moveOut(qp)
}

// moveAll moves every unschedulable pod to the active queue (or to backoff
// while its backoff lasts): the cluster changed in a way that may let them
// fit.
func (q *schedulingQueue) moveAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.moveCycle = q.cycle
	for _, qp := range q.unschedulable {
		q.moveOut(qp)
	}
}

// flushBackoff moves pods whose backoff ended to the active queue.
func (q *schedulingQueue) flushBackoff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for q.backoff.Len() > 0 && !q.backoff.items[0].backoffUntil.After(now) {
		q.toActive(heap.Pop(&q.backoff).(*queuedPod))
	}
}

// flushUnschedulable moves out the pods unschedulable for at least maxAge.
func (q *schedulingQueue) flushUnschedulable(maxAge time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, qp := range q.unschedulable {
		if now.Sub(qp.unschedulableSince) >= maxAge {
			q.moveOut(qp)
		}
	}
}

// close wakes pop up for good.
func (q *schedulingQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// counts returns the sizes of the active, backoff and unschedulable parts.
func (q *schedulingQueue) counts() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active.Len(), q.backoff.Len(), len(q.unschedulable)
}

// moveOut sends an unschedulable or in-flight pod to backoff while its
// backoff lasts, else to the active queue. Called with mu held.
func (q *schedulingQueue) moveOut(qp *queuedPod) {
	if qp.where == inUnschedulable {
		delete(q.unschedulable, qp.pod.UID)
	}
	if q.clock.Now().Before(qp.backoffUntil) {
		qp.where = inBackoff
		heap.Push(&q.backoff, qp)
		return
	}
	q.toActive(qp)
}

// toActive pushes qp on the active heap. Called with mu held.
func (q *schedulingQueue) toActive(qp *queuedPod) {
	q.seq++
	qp.seq, qp.where = q.seq, inActive
	heap.Push(&q.active, qp)
	q.cond.Signal()
}

// backoffFor is initialBackoff doubled per attempt after the first,
// capped at maxBackoff.
func (q *schedulingQueue) backoffFor(attempts int) time.Duration {
	d := q.initialBackoff
	for i := 1; i < attempts && d < q.maxBackoff; i++ {
		d *= 2
	}
	return min(d, q.maxBackoff)
}
