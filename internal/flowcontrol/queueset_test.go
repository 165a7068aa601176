package flowcontrol

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func newTestSet(cfg queueConfig) (*queueSet, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	qs := newQueueSet("test", clk, NewMetrics(nil))
	qs.configure(cfg)
	return qs, clk
}

// waitFor polls a condition that another goroutine's start makes true
// (a request enqueued); it fails after a generous time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, time.Millisecond, what, testwait.Bool(cond))
}

type started struct {
	name string
	req  *request
	err  error
}

// enqueue starts a request in a goroutine; its outcome arrives on out.
func enqueue(qs *queueSet, ctx context.Context, name, flow string, out chan<- started) {
	go func() {
		req, err := qs.start(ctx, "fs", flow, 1, flowHash("fs", flow))
		out <- started{name, req, err}
	}()
}

func TestDeal(t *testing.T) {
	for _, h := range []uint64{0, 1, 42, 1 << 40, ^uint64(0)} {
		hand := deal(h, 128, 6, nil)
		if len(hand) != 6 {
			t.Fatalf("hand %v", hand)
		}
		sorted := slices.Clone(hand)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != 6 || sorted[0] < 0 || sorted[5] >= 128 {
			t.Errorf("hash %d: hand %v not 6 distinct cards of 128", h, hand)
		}
		if again := deal(h, 128, 6, nil); !slices.Equal(again, hand) {
			t.Errorf("hash %d dealt %v then %v", h, hand, again)
		}
	}
	// A whole deck dealt is every card once.
	all := deal(12345, 8, 8, nil)
	slices.Sort(all)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("whole deck: %v", all)
	}
}

// TestFairQueuing: with one seat held, a flow that queued five requests
// and a flow that queued one afterwards alternate: the late flow's request
// runs second, not sixth.
func TestFairQueuing(t *testing.T) {
	qs, clk := newTestSet(queueConfig{limit: 1, queues: 64, handSize: 1, queueLengthLimit: 50})
	ctx := context.Background()
	if q1, q2 := deal(flowHash("fs", "heavy"), 64, 1, nil), deal(flowHash("fs", "light"), 64, 1, nil); q1[0] == q2[0] {
		t.Fatal("the two flows share a queue; pick other names")
	}
	held, err := qs.start(ctx, "fs", "heavy", 1, flowHash("fs", "heavy"))
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan started, 10)
	for i := range 5 {
		enqueue(qs, ctx, "heavy"+string(rune('0'+i)), "heavy", out)
		waitFor(t, "heavy request queued", func() bool { w, _, _ := qs.counts(); return w == i+1 })
	}
	enqueue(qs, ctx, "light", "light", out)
	waitFor(t, "light request queued", func() bool { w, _, _ := qs.counts(); return w == 6 })

	var order []string
	cur := held
	for range 6 {
		clk.Step(10 * time.Millisecond) // each request takes 10 ms
		qs.finish(cur)
		s := <-out
		if s.err != nil {
			t.Fatalf("%s rejected: %s", s.name, s.req.reason)
		}
		order = append(order, s.name)
		cur = s.req
	}
	qs.finish(cur)
	if order[0] != "light" && order[1] != "light" {
		t.Errorf("dispatch order %v: the light flow waited behind the heavy one", order)
	}
	if w, e, seats := qs.counts(); w != 0 || e != 0 || seats != 0 {
		t.Errorf("left %d waiting, %d executing, %d seats", w, e, seats)
	}
}

// TestNewcomerAfterSlowRequest: after one of a backlogged flow's requests
// ran far longer than assumed, a flow that then sends one request is
// dispatched after at most one request of each of the backlogged flow's
// queues, not after the backlogged flow's other queues caught up on the
// slow request's time (the tail of a second tenant under a flood).
func TestNewcomerAfterSlowRequest(t *testing.T) {
	const hand = 3
	qs, clk := newTestSet(queueConfig{limit: 1, queues: 64, handSize: hand, queueLengthLimit: 50})
	ctx := context.Background()
	heavy, light := flowHash("fs", "heavy"), flowHash("fs", "light")
	if h, l := deal(heavy, 64, hand, nil), deal(light, 64, hand, nil); slices.ContainsFunc(l, func(c int) bool { return slices.Contains(h, c) }) {
		t.Fatal("the two flows' hands overlap; pick other names")
	}
	cur, err := qs.start(ctx, "fs", "heavy", 1, heavy)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan started, 64)
	const queued = 30
	for i := range queued {
		enqueue(qs, ctx, "heavy", "heavy", out)
		waitFor(t, "heavy request queued", func() bool { w, _, _ := qs.counts(); return w == i+1 })
	}
	next := func(took time.Duration) started {
		clk.Step(took)
		qs.finish(cur)
		s := <-out
		if s.err != nil {
			t.Fatalf("%s rejected: %s", s.name, s.req.reason)
		}
		cur = s.req
		return s
	}
	for range 3 { // the flood's ordinary pace: 1 ms a request
		next(time.Millisecond)
	}
	next(300 * time.Millisecond) // one request of the flood runs 300 ms
	enqueue(qs, ctx, "light", "light", out)
	waitFor(t, "light request queued", func() bool { w, _, _ := qs.counts(); return w == queued-3 })
	before := 0
	for next(time.Millisecond).name != "light" {
		before++
	}
	if before > hand {
		t.Errorf("the newcomer was dispatched after %d of the flood's requests, want at most %d (one per queue of its hand)", before, hand)
	}
	for {
		w, _, _ := qs.counts()
		if w == 0 {
			break
		}
		next(time.Millisecond)
	}
	qs.finish(cur)
	if w, e, seats := qs.counts(); w != 0 || e != 0 || seats != 0 {
		t.Errorf("left %d waiting, %d executing, %d seats", w, e, seats)
	}
}

// TestQueueFull: a full queue rejects at once with queue-full, while the
// level's seats are taken.
func TestQueueFull(t *testing.T) {
	qs, _ := newTestSet(queueConfig{limit: 1, queues: 1, handSize: 1, queueLengthLimit: 2})
	ctx := context.Background()
	held, _ := qs.start(ctx, "fs", "a", 1, 1)
	out := make(chan started, 3)
	for i := range 2 {
		enqueue(qs, ctx, "q", "a", out)
		waitFor(t, "queued", func() bool { w, _, _ := qs.counts(); return w == i+1 })
	}
	req, err := qs.start(ctx, "fs", "b", 1, 2)
	if !errors.Is(err, errRejected) || req.reason != ReasonQueueFull {
		t.Fatalf("third request: %v %+v", err, req)
	}
	qs.finish(held)
	first := <-out
	qs.finish(first.req)
	second := <-out
	qs.finish(second.req)
	if first.err != nil || second.err != nil {
		t.Errorf("queued requests rejected: %v %v", first.err, second.err)
	}
}

// TestRejectLevel: a level without queues runs what fits and refuses the
// rest with concurrency-limit; a request wider than the limit runs alone.
func TestRejectLevel(t *testing.T) {
	qs, _ := newTestSet(queueConfig{limit: 2})
	ctx := context.Background()
	a, errA := qs.start(ctx, "fs", "x", 1, 1)
	b, errB := qs.start(ctx, "fs", "x", 1, 1)
	c, errC := qs.start(ctx, "fs", "x", 1, 1)
	if errA != nil || errB != nil || !errors.Is(errC, errRejected) || c.reason != ReasonConcurrencyLimit {
		t.Fatalf("got %v %v %v", errA, errB, errC)
	}
	qs.finish(a)
	qs.finish(b)
	wide, err := qs.start(ctx, "fs", "x", 5, 1)
	if err != nil {
		t.Fatalf("a wide request alone: %v", err)
	}
	if _, err := qs.start(ctx, "fs", "x", 1, 1); !errors.Is(err, errRejected) {
		t.Error("a request fitted beside one wider than the limit")
	}
	qs.finish(wide)
}

// TestWaitLimit: a request that waits past its wait limit is taken out of
// its queue and rejected with time-out; one whose client goes away, with
// cancelled.
func TestWaitLimit(t *testing.T) {
	qs, _ := newTestSet(queueConfig{limit: 1, queues: 4, handSize: 2, queueLengthLimit: 10})
	held, _ := qs.start(context.Background(), "fs", "a", 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, err := qs.start(ctx, "fs", "a", 1, 1)
	if !errors.Is(err, errRejected) || req.reason != ReasonTimeout {
		t.Fatalf("got %v %+v", err, req)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	out := make(chan started, 1)
	enqueue(qs, ctx2, "c", "a", out)
	waitFor(t, "queued", func() bool { w, _, _ := qs.counts(); return w == 1 })
	cancel2()
	if s := <-out; s.req.reason != ReasonCancelled {
		t.Errorf("cancelled request: %+v", s.req)
	}
	if w, e, _ := qs.counts(); w != 0 || e != 1 {
		t.Errorf("%d waiting, %d executing", w, e)
	}
	qs.finish(held)
}

// TestReconfigure: raising the limit dispatches waiting requests at once;
// fewer queues drop the surplus ones once empty.
func TestReconfigure(t *testing.T) {
	qs, _ := newTestSet(queueConfig{limit: 1, queues: 8, handSize: 2, queueLengthLimit: 10})
	ctx := context.Background()
	held, _ := qs.start(ctx, "fs", "a", 1, 7)
	out := make(chan started, 1)
	enqueue(qs, ctx, "w", "b", out)
	waitFor(t, "queued", func() bool { w, _, _ := qs.counts(); return w == 1 })
	qs.configure(queueConfig{limit: 2, queues: 2, handSize: 2, queueLengthLimit: 10})
	s := <-out
	if s.err != nil {
		t.Fatal(s.err)
	}
	qs.finish(s.req)
	qs.finish(held)
	qs.mu.Lock()
	n := len(qs.queues)
	qs.mu.Unlock()
	if n != 2 {
		t.Errorf("%d queues after lowering to 2", n)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(100, 0)
	tr := newRetryAfter(func() time.Time { return now })
	if got := tr.get("pl"); got != 1 {
		t.Fatalf("initial %d", got)
	}
	// Many drops in one second, then a new second: doubled.
	for range 10 {
		tr.dropped("pl")
	}
	now = now.Add(time.Second)
	tr.dropped("pl")
	if got := tr.get("pl"); got != 2 {
		t.Fatalf("after a burst: %d, want 2", got)
	}
	// Quiet seconds bring it back down by one per second with a drop.
	now = now.Add(10 * time.Second)
	tr.dropped("pl")
	if got := tr.get("pl"); got != 1 {
		t.Errorf("after quiet: %d, want 1", got)
	}
	if got := tr.get("other"); got != 1 {
		t.Errorf("other level: %d", got)
	}
}

func TestListSeats(t *testing.T) {
	for _, c := range []struct{ stored, limit int64 }{{0, 0}, {99, 0}, {101, 0}, {5000, 0}, {5000, 250}, {50, 500}} {
		got := ListSeats(c.stored, c.limit)
		want := map[[2]int64]int{{0, 0}: 1, {99, 0}: 1, {101, 0}: 2, {5000, 0}: 10, {5000, 250}: 3, {50, 500}: 1}[[2]int64{c.stored, c.limit}]
		if got != want {
			t.Errorf("ListSeats(%d, %d) = %d, want %d", c.stored, c.limit, got, want)
		}
	}
}
