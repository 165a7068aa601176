package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func qpod(name string, prio int32) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: corev1.PodSpec{Priority: new(prio)}}
}

func newTestQueue() (*schedulingQueue, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	return newSchedulingQueue(clk, time.Second, 10*time.Second), clk
}

func mustPop(t *testing.T, q *schedulingQueue) (*queuedPod, int64) {
	t.Helper()
	if a, _, _ := q.counts(); a == 0 {
		t.Fatal("active queue empty")
	}
	qp, _, _, cycle, ok := q.pop()
	if !ok {
		t.Fatal("queue closed")
	}
	return qp, cycle
}

func where(q *schedulingQueue, uid string) location {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qp := q.pods[types.UID(uid)]; qp != nil {
		return qp.where
	}
	return 0
}

// Higher priority first, then first in, first out.
func TestQueuePriorityThenFIFO(t *testing.T) {
	q, _ := newTestQueue()
	for _, p := range []*corev1.Pod{qpod("low1", 0), qpod("high", 10), qpod("low2", 0), qpod("mid", 5)} {
		q.addOrUpdate(p, podDemand{}, true)
	}
	var got []string
	for range 4 {
		qp, _ := mustPop(t, q)
		got = append(got, qp.pod.Name)
	}
	want := []string{"high", "mid", "low1", "low2"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// Backoff doubles per attempt from 1s and is capped at 10s; a pod leaves
// backoff only when its time is up.
func TestQueueBackoff(t *testing.T) {
	q, clk := newTestQueue()
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		4: 8 * time.Second, 5: 10 * time.Second, 30: 10 * time.Second} {
		if got := q.backoffFor(attempts); got != want {
			t.Errorf("backoffFor(%d) = %v, want %v", attempts, got, want)
		}
	}
	q.addOrUpdate(qpod("p", 0), podDemand{}, true)
	qp, _ := mustPop(t, q)
	q.requeueBackoff(qp)
	if w := where(q, "p"); w != inBackoff {
		t.Fatalf("after an error the pod is in %v, want backoff", w)
	}
	clk.Step(999 * time.Millisecond)
	q.flushBackoff()
	if w := where(q, "p"); w != inBackoff {
		t.Fatalf("pod left backoff early")
	}
	clk.Step(time.Millisecond)
	q.flushBackoff()
	if w := where(q, "p"); w != inActive {
		t.Fatalf("pod in %v after its backoff, want active", w)
	}
	qp, _ = mustPop(t, q) // second attempt: 2s
	q.requeueBackoff(qp)
	clk.Step(1500 * time.Millisecond)
	q.flushBackoff()
	if w := where(q, "p"); w != inBackoff {
		t.Fatalf("second backoff shorter than 2s")
	}
}

// An unschedulable pod waits for a move; a move sends it to backoff while
// its backoff lasts and to active after; the periodic flush moves it after
// the period.
func TestQueueUnschedulableMoves(t *testing.T) {
	q, clk := newTestQueue()
	q.addOrUpdate(qpod("p", 0), podDemand{}, true)
	qp, cycle := mustPop(t, q)
	q.requeueUnschedulable(qp, cycle)
	if w := where(q, "p"); w != inUnschedulable {
		t.Fatalf("pod in %v, want unschedulable", w)
	}
	q.flushBackoff()
	clk.Step(5 * time.Second)
	q.flushBackoff()
	if w := where(q, "p"); w != inUnschedulable {
		t.Fatalf("unschedulable pod moved without a cause")
	}
	q.moveAll()
	if w := where(q, "p"); w != inActive {
		t.Fatalf("moved pod past its backoff in %v, want active", w)
	}

	qp, cycle = mustPop(t, q)
	q.requeueUnschedulable(qp, cycle)
	q.moveAll() // within the 2s backoff
	if w := where(q, "p"); w != inBackoff {
		t.Fatalf("moved pod within its backoff in %v, want backoff", w)
	}
	clk.Step(2 * time.Second)
	q.flushBackoff()
	qp, cycle = mustPop(t, q)
	q.requeueUnschedulable(qp, cycle)
	clk.Step(59 * time.Second)
	q.flushUnschedulable(time.Minute)
	if w := where(q, "p"); w != inUnschedulable {
		t.Fatalf("flushed before the period")
	}
	clk.Step(time.Second)
	q.flushUnschedulable(time.Minute)
	if w := where(q, "p"); w != inActive {
		t.Fatalf("after the flush period the pod is in %v, want active", w)
	}
}

// A cluster change or a spec change during an attempt means the failure
// may be stale: the pod backs off instead of waiting as unschedulable.
func TestQueueChangeDuringAttempt(t *testing.T) {
	q, clk := newTestQueue()
	q.addOrUpdate(qpod("a", 0), podDemand{}, true)
	q.addOrUpdate(qpod("b", 0), podDemand{}, true)
	qa, ca := mustPop(t, q)
	q.moveAll() // e.g. a node was added while a was being scheduled
	q.requeueUnschedulable(qa, ca)
	if w := where(q, "a"); w != inBackoff {
		t.Fatalf("a in %v, want backoff", w)
	}
	qb, cb := mustPop(t, q)
	q.addOrUpdate(qpod("b", 0), podDemand{}, true) // spec changed in flight
	q.requeueUnschedulable(qb, cb)
	if w := where(q, "b"); w != inBackoff {
		t.Fatalf("b in %v, want backoff", w)
	}
	clk.Step(time.Second)
	q.flushBackoff()
	qa, ca = mustPop(t, q)
	q.requeueUnschedulable(qa, ca) // nothing changed this time
	if w := where(q, "a"); w != inUnschedulable {
		t.Fatalf("a in %v, want unschedulable", w)
	}
	// A status-only update (no spec change) leaves it there; a spec change
	// moves it.
	q.addOrUpdate(qpod("a", 0), podDemand{}, false)
	if w := where(q, "a"); w != inUnschedulable {
		t.Fatalf("status update moved a to %v", w)
	}
	clk.Step(10 * time.Second)
	q.addOrUpdate(qpod("a", 0), podDemand{}, true)
	if w := where(q, "a"); w != inActive {
		t.Fatalf("spec update left a in %v", w)
	}
}

// A pod removed in any state is gone for good, in flight included.
func TestQueueRemove(t *testing.T) {
	q, _ := newTestQueue()
	popped := map[string]*queuedPod{}
	for _, n := range []string{"backoff", "unsched", "flight"} {
		q.addOrUpdate(qpod(n, 0), podDemand{}, true)
		qp, c := mustPop(t, q)
		popped[n] = qp
		if n == "unsched" {
			q.requeueUnschedulable(qp, c)
		}
	}
	q.requeueBackoff(popped["backoff"])
	q.addOrUpdate(qpod("active", 0), podDemand{}, true)
	want := map[string]location{"active": inActive, "backoff": inBackoff, "unsched": inUnschedulable, "flight": inFlight}
	for n, w := range want {
		if got := where(q, n); got != w {
			t.Fatalf("%s in %v, want %v", n, got, w)
		}
		q.remove(types.UID(n))
	}
	q.requeueBackoff(popped["flight"]) // its binding failed after the delete
	a, b, u := q.counts()
	if a+b+u != 0 || len(q.pods) != 0 {
		t.Fatalf("queue not empty after removes: active %d backoff %d unschedulable %d known %d", a, b, u, len(q.pods))
	}
}

// pop blocks until a pod arrives, and close releases it.
func TestQueuePopBlocks(t *testing.T) {
	q, _ := newTestQueue()
	got := make(chan string, 1)
	go func() {
		qp, _, _, _, ok := q.pop()
		if ok {
			got <- qp.pod.Name
		}
		close(got)
	}()
	q.addOrUpdate(qpod("x", 0), podDemand{}, true)
	select {
	case n := <-got:
		if n != "x" {
			t.Fatalf("popped %q", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pop did not return the added pod")
	}
	done := make(chan bool)
	go func() {
		_, _, _, _, ok := q.pop()
		done <- ok
	}()
	q.close()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("pop after close returned a pod")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("close did not release pop")
	}
}
