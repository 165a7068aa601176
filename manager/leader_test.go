package manager_test

import (
	"context"
	"errors"
	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1500 * time.Millisecond
	retryPeriod   = 300 * time.Millisecond
)

// interval is one stretch of leadership of one manager.
type interval struct{ from, to time.Time }

// candidate is a manager with leader election whose leading intervals
// (from the OnStartedLeading / OnStoppedLeading hooks, which bracket its
// controllers) and reconciles are recorded.
type candidate struct {
	name string
	*started
	rec *recorder

	mu        sync.Mutex
	intervals []interval
}

func (c *candidate) leading() []interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]interval(nil), c.intervals...)
	if n := len(out); n > 0 && out[n-1].to.IsZero() {
		out[n-1].to = time.Now() // still leading
	}
	return out
}

func newCandidate(t *testing.T, name string, cfg *rest.Config) *candidate {
	c := &candidate{name: name, rec: &recorder{}}
	m := newManager(t, cfg, manager.Options{
		LeaderElection: true, LeaderElectionID: "demo-controller", LeaderElectionIdentity: name,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		OnStartedLeading: func() {
			c.mu.Lock()
			c.intervals = append(c.intervals, interval{from: time.Now()})
			c.mu.Unlock()
		},
		OnStoppedLeading: func() {
			c.mu.Lock()
			c.intervals[len(c.intervals)-1].to = time.Now()
			c.mu.Unlock()
		},
	})
	addConfigMapController(t, m, c.rec)
	c.started = start(m)
	return c
}

// firstElected waits until one of cs leads and returns it and the others.
func firstElected(t *testing.T, cs ...*candidate) *candidate {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, c := range cs {
			select {
			case <-c.m.Elected():
				return c
			default:
			}
		}
		select {
		case <-deadline:
			t.Fatal("nobody was elected")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// checkExclusive proves that no two candidates ever led at the same time
// and that every reconcile happened while its manager led.
func checkExclusive(t *testing.T, cs ...*candidate) {
	t.Helper()
	for i, a := range cs {
		for _, ra := range a.rec.snapshot() {
			inside := false
			for _, iv := range a.leading() {
				inside = inside || !ra.Before(iv.from) && !ra.After(iv.to)
			}
			if !inside {
				t.Errorf("%s reconciled at %v outside its leadership %v", a.name, ra, a.leading())
			}
		}
		for _, b := range cs[i+1:] {
			for _, x := range a.leading() {
				for _, y := range b.leading() {
					if x.from.Before(y.to) && y.from.Before(x.to) {
						t.Errorf("%s led %v and %s led %v at the same time", a.name, x, b.name, y)
					}
				}
			}
		}
	}
}

func createConfigMap(t *testing.T, cfg *rest.Config, name string) {
	t.Helper()
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	if _, err := cms.Namespace("default").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestLeaderElectionHandoverOnCancel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	a, b := newCandidate(t, "a", cfg), newCandidate(t, "b", cfg)
	leader := firstElected(t, a, b)
	follower := b
	if leader == b {
		follower = a
	}
	createConfigMap(t, cfg, "one")
	eventually(t, "leader reconciles", func() bool { return leader.rec.count("one") > 0 })
	if n := follower.rec.count("one"); n != 0 {
		t.Fatalf("follower reconciled %d times", n)
	}

	cut := time.Now()
	if err := leader.stop(t); err != nil {
		t.Fatalf("leader Start: %v", err)
	}
	select {
	case <-follower.m.Elected():
	case <-time.After(leaseDuration):
		t.Fatal("follower not elected within the lease duration after the leader released")
	}
	t.Logf("handover after cancel took %v", time.Since(cut))
	createConfigMap(t, cfg, "two")
	eventually(t, "new leader reconciles", func() bool { return follower.rec.count("two") > 0 })
	if err := follower.stop(t); err != nil {
		t.Fatal(err)
	}
	checkExclusive(t, a, b)
}

func TestLeaderElectionHandoverWhenRenewalsAreCut(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	proxy := tcpproxy.New(t, cfg.Host)
	viaProxy := *cfg
	viaProxy.Host = "https://" + proxy.Addr()
	viaProxy.MaxRetries = -1

	a := newCandidate(t, "a", &viaProxy)
	if firstElected(t, a) != a {
		t.Fatal("a not elected")
	}
	b := newCandidate(t, "b", cfg)
	createConfigMap(t, cfg, "one")
	eventually(t, "a reconciles", func() bool { return a.rec.count("one") > 0 })

	cut := time.Now()
	proxy.Cut()
	select {
	case err := <-a.done:
		if !errors.Is(err, manager.ErrLeaderElectionLost) {
			t.Fatalf("a's Start = %v, want ErrLeaderElectionLost", err)
		}
		t.Logf("a stopped %v after the cut: %v", time.Since(cut), err)
	case <-time.After(10 * time.Second):
		t.Fatal("a kept running without renewals")
	}
	select {
	case <-b.m.Elected():
	case <-time.After(leaseDuration + 3*retryPeriod + time.Second):
		t.Fatal("b not elected after a's lease expired")
	}
	t.Logf("handover after the cut took %v", time.Since(cut))
	createConfigMap(t, cfg, "two")
	eventually(t, "b reconciles", func() bool { return b.rec.count("two") > 0 })
	if err := b.stop(t); err != nil {
		t.Fatal(err)
	}
	a.cancel()
	checkExclusive(t, a, b)
}
