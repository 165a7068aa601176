package workqueue

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// model is the obviously-correct, single-threaded reference the queue is
// checked against: maps and a linear scan instead of levels and heaps.
type model struct {
	seq        int
	dirty      map[int]bool
	processing map[int]bool
	prio       map[int]int // priority of dirty items
	pos        map[int]int // seq of queued items (dirty, not processing)
	waiting    map[int]*modelWait
	failures   map[int]int
	now        time.Duration
}

type modelWait struct {
	at    time.Duration
	prio  int
	order int
}

func newModel() *model {
	return &model{dirty: map[int]bool{}, processing: map[int]bool{}, prio: map[int]int{},
		pos: map[int]int{}, waiting: map[int]*modelWait{}, failures: map[int]int{}}
}

func (m *model) add(it, p int) {
	m.seq++
	switch {
	case !m.dirty[it]:
		m.dirty[it], m.prio[it] = true, p
		if !m.processing[it] {
			m.pos[it] = m.seq
		}
	case p > m.prio[it]:
		m.prio[it] = p
		if !m.processing[it] {
			m.pos[it] = m.seq
		}
	}
}

// next is the item Get must return, or false when none is queued.
func (m *model) next() (int, bool) {
	best, found := 0, false
	for it, s := range m.pos {
		if !found || m.prio[it] > m.prio[best] || m.prio[it] == m.prio[best] && s < m.pos[best] {
			best, found = it, true
		}
	}
	return best, found
}

func (m *model) addAfter(it int, d time.Duration, p int) {
	if d <= 0 {
		m.add(it, p)
		return
	}
	m.seq++
	if w, ok := m.waiting[it]; ok {
		w.at, w.prio = min(w.at, m.now+d), max(w.prio, p)
		return
	}
	m.waiting[it] = &modelWait{at: m.now + d, prio: p, order: m.seq}
}

func (m *model) step(d time.Duration) {
	m.now += d
	var ready []int
	for it, w := range m.waiting {
		if w.at <= m.now {
			ready = append(ready, it)
		}
	}
	slices.SortFunc(ready, func(a, b int) int {
		wa, wb := m.waiting[a], m.waiting[b]
		if wa.at != wb.at {
			return int(wa.at - wb.at)
		}
		return wa.order - wb.order
	})
	for _, it := range ready {
		m.add(it, m.waiting[it].prio)
		delete(m.waiting, it)
	}
}

// backoff is the wait of the n-th failure from an exponential limiter with
// base and a one second cap.
func backoff(base time.Duration, n int) time.Duration {
	return min(base<<min(n, 20), time.Second)
}

// TestModel drives the queue with random operation sequences and checks
// every observable result against the model, metamorphic-test style. A
// failing seed is printed and can be replayed by putting it first in seeds.
func TestModel(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	for range 50 {
		seeds = append(seeds, rand.Uint64())
	}
	// A 1ms base delays every retry; a zero base takes the path where
	// AddRateLimited and Forget are only buffered.
	for _, base := range []time.Duration{time.Millisecond, 0} {
		for _, seed := range seeds {
			runModel(t, seed, 2000, base)
			if t.Failed() {
				t.Fatalf("model mismatch with seed %d, base %v", seed, base)
			}
		}
	}
}

func runModel(t *testing.T, seed uint64, ops int, base time.Duration) {
	rng := rand.New(rand.NewPCG(seed, seed))
	clk := clocktesting.NewFakeClock(epoch)
	q := NewRateLimiting[int](NewExponentialRateLimiter[int](base, time.Second), Config{Clock: clk})
	defer q.ShutDown()
	m := newModel()
	prios := []int{LowPriority, 0, 0, 0, 7}
	for op := range ops {
		it := rng.IntN(12)
		switch k := rng.IntN(10); {
		case k < 3:
			p := prios[rng.IntN(len(prios))]
			q.AddWithOpts(AddOpts{Priority: p}, it)
			m.add(it, p)
		case k < 4:
			d := time.Duration(rng.IntN(5)) * time.Millisecond
			q.AddAfter(it, d)
			m.addAfter(it, d, 0)
		case k < 5:
			q.AddRateLimited(it)
			m.addAfter(it, backoff(base, m.failures[it]), 0)
			m.failures[it]++
		case k < 6:
			q.Forget(it)
			delete(m.failures, it)
		case k < 8:
			want, ok := m.next()
			if !ok {
				continue // Get would block
			}
			got, shutdown := q.Get()
			if shutdown || got != want {
				t.Errorf("op %d: Get = %d, %v; model wants %d", op, got, shutdown, want)
				return
			}
			delete(m.pos, want)
			delete(m.dirty, want)
			m.processing[want] = true
		case k < 9:
			if len(m.processing) == 0 {
				q.Done(it) // not held: must be a no-op
				break
			}
			held := slices.Sorted(maps.Keys(m.processing))
			p := held[rng.IntN(len(held))]
			q.Done(p)
			delete(m.processing, p)
			if m.dirty[p] {
				m.seq++
				m.pos[p] = m.seq
			}
		default:
			d := time.Duration(rng.IntN(4)) * time.Millisecond
			clk.Step(d)
			q.moveReady()
			m.step(d)
		}
		if got, want := q.Len(), len(m.pos); got != want {
			t.Errorf("op %d: Len = %d, model %d", op, got, want)
			return
		}
		if got, want := q.NumRequeues(it), m.failures[it]; got != want {
			t.Errorf("op %d: NumRequeues(%d) = %d, model %d", op, it, got, want)
			return
		}
	}
	// Shut down: the queued rest comes out in model order, then shutdown.
	q.ShutDown()
	for {
		want, ok := m.next()
		got, shutdown := q.Get()
		if !ok {
			if !shutdown {
				t.Errorf("after drain Get = %d, want shutdown", got)
			}
			return
		}
		if shutdown || got != want {
			t.Errorf("drain: Get = %d, %v; model wants %d", got, shutdown, want)
			return
		}
		delete(m.pos, want)
		delete(m.dirty, want)
	}
}
