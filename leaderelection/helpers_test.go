package leaderelection_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/leaderelection"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testNS = "default"

// startServer runs a real API server and returns its client config.
func startServer(t *testing.T) *rest.Config {
	t.Helper()
	return testserver.Start(t, testserver.Options{}).RESTConfig(t)
}

// newClient builds a client from cfg, optionally sending to host instead.
func newClient(t *testing.T, cfg *rest.Config, host string) *rest.Client {
	t.Helper()
	c := *cfg
	if host != "" {
		c.Host = host
	}
	cl, err := rest.New(&c)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.CloseIdleConnections)
	return cl
}

func getLease(t *testing.T, c *rest.Client, name string) *coordinationv1.Lease {
	t.Helper()
	r := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, coordinationv1.SchemeGroupVersion.WithResource("leases"), true)
	l, err := r.Namespace(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	return l
}

// eventually polls cond every 10ms until it holds or 30s pass. The bound is
// a hang guard, not a timing assertion.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 10*time.Millisecond, what, testwait.Bool(cond))
}

// interval is one stretch during which a candidate's OnStartedLeading ran.
type interval struct {
	who        string
	start, end time.Time
}

// tracker records leadership as the callbacks see it and flags any moment
// at which two candidates' OnStartedLeading run at once.
type tracker struct {
	mu         sync.Mutex
	current    string // whose OnStartedLeading is running, "" if none
	violations []string
	intervals  []interval
	stopped    map[string]int // OnStoppedLeading calls per identity
}

func newTracker() *tracker { return &tracker{stopped: map[string]int{}} }

func (tr *tracker) begin(who string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.current != "" {
		tr.violations = append(tr.violations, who+" started while "+tr.current+" leads")
	}
	tr.current = who
	tr.intervals = append(tr.intervals, interval{who: who, start: time.Now()})
}

func (tr *tracker) end(who string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.current == who {
		tr.current = ""
	}
	for i := len(tr.intervals) - 1; i >= 0; i-- {
		if tr.intervals[i].who == who && tr.intervals[i].end.IsZero() {
			tr.intervals[i].end = time.Now()
			break
		}
	}
}

func (tr *tracker) stoppedLeading(who string) {
	tr.mu.Lock()
	tr.stopped[who]++
	tr.mu.Unlock()
}

// check fails t on any overlap of leadership intervals.
func (tr *tracker) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, v := range tr.violations {
		t.Errorf("two leaders: %s", v)
	}
	for i, a := range tr.intervals {
		for _, b := range tr.intervals[i+1:] {
			if a.who == b.who {
				continue
			}
			aEnd, bEnd := a.end, b.end
			if aEnd.IsZero() {
				aEnd = time.Now()
			}
			if bEnd.IsZero() {
				bEnd = time.Now()
			}
			if a.start.Before(bEnd) && b.start.Before(aEnd) {
				t.Errorf("leadership of %s [%v, %v] overlaps %s [%v, %v]", a.who, a.start, aEnd, b.who, b.start, bEnd)
			}
		}
	}
}

// candidate is one elector under test with the state its callbacks saw.
type candidate struct {
	id     string
	le     *leaderelection.LeaderElector
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned

	mu      sync.Mutex
	leaders []string // OnNewLeader calls, in order
	// onWorkEnd, if set, runs inside OnStartedLeading after its ctx ended.
	onWorkEnd func()
}

func (c *candidate) sawLeader(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.leaders {
		if l == id {
			return true
		}
	}
	return false
}

type candOpts struct {
	client  *rest.Client
	lease   string
	clock   clock.WithTicker
	release bool
	tr      *tracker
}

// startCandidate builds and runs a candidate; the test's cleanup cancels it
// and waits for Run to return.
func startCandidate(t *testing.T, id string, o candOpts) *candidate {
	t.Helper()
	c := &candidate{id: id, done: make(chan struct{})}
	cfg := leaderelection.Config{
		Lock:            &leaderelection.LeaseLock{Namespace: testNS, Name: o.lease, Identity: id, Client: o.client},
		LeaseDuration:   1500 * time.Millisecond,
		RenewDeadline:   time.Second,
		RetryPeriod:     200 * time.Millisecond,
		ReleaseOnCancel: o.release,
		Clock:           o.clock,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				o.tr.begin(id)
				<-ctx.Done()
				o.tr.end(id)
				c.mu.Lock()
				f := c.onWorkEnd
				c.mu.Unlock()
				if f != nil {
					f()
				}
			},
			OnStoppedLeading: func() { o.tr.stoppedLeading(id) },
			OnNewLeader: func(l string) {
				c.mu.Lock()
				c.leaders = append(c.leaders, l)
				c.mu.Unlock()
			},
		},
	}
	le, err := leaderelection.New(cfg)
	if err != nil {
		t.Fatalf("new elector %s: %v", id, err)
	}
	c.le = le
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() {
		defer close(c.done)
		le.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}
