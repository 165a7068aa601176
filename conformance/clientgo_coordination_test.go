package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestClientGoRetryOnConflict: goroutines increment one ConfigMap's
// counter through retry.RetryOnConflict; no increment is lost and
// conflicts really happened (row 7).
func TestClientGoRetryOnConflict(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, increments = 8, 15
	backoff := wait.Backoff{Steps: 500, Duration: 2 * time.Millisecond, Factor: 1, Jitter: 1} // no Cap: reaching it ends the steps
	var conflicts, attempts atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < increments; i++ {
				err := retry.RetryOnConflict(backoff, func() error {
					attempts.Add(1)
					cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(cm.Data["n"])
					cm.Data["n"] = strconv.Itoa(n + 1)
					_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
					if apierrors.IsConflict(err) {
						conflicts.Add(1)
					}
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["n"] != strconv.Itoa(workers*increments) {
		t.Fatalf("counter %s, want %d", cm.Data["n"], workers*increments)
	}
	if conflicts.Load() == 0 {
		t.Fatalf("no conflicts in %d attempts by %d concurrent writers", attempts.Load(), workers)
	}
	if attempts.Load() != int64(workers*increments)+conflicts.Load() {
		t.Fatalf("%d attempts, %d conflicts, %d increments", attempts.Load(), conflicts.Load(), workers*increments)
	}
	t.Logf("%d increments, %d conflicts retried", workers*increments, conflicts.Load())
}

// candidate is one client-go leader elector.
type candidate struct {
	id      string
	cancel  context.CancelFunc
	done    chan struct{}
	started chan struct{}
	stopped chan struct{}
}

// TestClientGoLeaderElection: two client-go leader electors on a setpoint
// Lease; exactly one leads at a time, the Lease names it, and when the
// leader's context ends (ReleaseOnCancel) the other takes over (row 9).
func TestClientGoLeaderElection(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	const ns, name = "kube-system", "cg-election"
	var mu sync.Mutex
	leading := map[string]bool{}
	var violations []string
	var timeline []string

	run := func(id string) *candidate {
		cs := clientset(t, env)
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, name, cs.CoreV1(), cs.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &candidate{id: id, cancel: cancel, done: make(chan struct{}), started: make(chan struct{}), stopped: make(chan struct{})}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
			ReleaseOnCancel: true, Name: "conformance",
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					mu.Lock()
					defer mu.Unlock()
					for other, l := range leading {
						if l && other != id {
							violations = append(violations, fmt.Sprintf("%s started leading while %s leads", id, other))
						}
					}
					leading[id] = true
					timeline = append(timeline, id+" started")
					close(c.started)
				},
				OnStoppedLeading: func() {
					mu.Lock()
					defer mu.Unlock()
					leading[id] = false
					timeline = append(timeline, id+" stopped")
					close(c.stopped)
				},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(c.done)
			le.Run(ctx)
		}()
		return c
	}
	holder := func() (string, int32) {
		t.Helper()
		l, err := clientset(t, env).CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var h string
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		var tr int32
		if l.Spec.LeaseTransitions != nil {
			tr = *l.Spec.LeaseTransitions
		}
		return h, tr
	}
	waitFor := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}

	a := run("candidate-a")
	waitFor(a.started, "candidate-a to lead")
	b := run("candidate-b")
	defer b.cancel()
	// b stays a follower while a renews (longer than a lease duration)
	select {
	case <-b.started:
		t.Fatal("candidate-b leads while candidate-a holds the lease")
	case <-time.After(4 * time.Second):
	}
	if h, _ := holder(); h != "candidate-a" {
		t.Fatalf("lease holder %q, want candidate-a", h)
	}
	_, transitionsBefore := holder()

	// a's context ends: it releases the lease, b takes over
	released := time.Now()
	a.cancel()
	waitFor(a.stopped, "candidate-a to stop")
	waitFor(a.done, "candidate-a's elector to return")
	waitFor(b.started, "candidate-b to take over")
	if d := time.Since(released); d > 2*time.Second {
		t.Errorf("takeover after a release took %v (a released lease needs no expiry)", d)
	}
	h, transitions := holder()
	if h != "candidate-b" || transitions != transitionsBefore+1 {
		t.Fatalf("lease holder %q transitions %d (before %d), want candidate-b and one more", h, transitions, transitionsBefore)
	}
	b.cancel()
	waitFor(b.done, "candidate-b's elector to return")
	if h, _ := holder(); h != "" {
		t.Fatalf("lease holder %q after b released it, want none", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	if got := strings.Join(timeline, ", "); got != "candidate-a started, candidate-a stopped, candidate-b started, candidate-b stopped" {
		t.Fatalf("timeline %s", got)
	}
}

// TestClientGoEventRecorder: client-go's event recorder writes to
// setpoint; repeated events become one with a growing count, similar ones
// are aggregated, and kubectl get events lists them (row 10).
func TestClientGoEventRecorder(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	createNamespace(t, cs, "ev")
	target, err := cs.CoreV1().ConfigMaps("ev").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := record.NewBroadcaster()
	defer b.Shutdown()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	rec := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "cg-recorder"})

	for i := 0; i < 3; i++ {
		rec.Event(target, corev1.EventTypeNormal, "Started", "the same message")
	}
	for i := 0; i < 12; i++ {
		rec.Eventf(target, corev1.EventTypeWarning, "Similar", "message number %d", i)
	}

	var started *corev1.Event
	var similar, combined []corev1.Event
	deadline := time.Now().Add(15 * time.Second)
	for {
		started, similar, combined = nil, nil, nil
		l, err := cs.CoreV1().Events("ev").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range l.Items {
			switch {
			case e.Reason == "Started":
				started = &l.Items[i]
			case e.Reason == "Similar" && strings.HasPrefix(e.Message, "(combined from similar events)"):
				combined = append(combined, e)
			case e.Reason == "Similar":
				similar = append(similar, e)
			}
		}
		if started != nil && started.Count == 3 && len(combined) == 1 && combined[0].Count == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events: started %+v, %d similar, combined %+v", started, len(similar), combined)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(similar) != 9 {
		t.Errorf("%d individual Similar events, want 9 (the 10th on is aggregated)", len(similar))
	}
	if started.InvolvedObject.Kind != "ConfigMap" || started.InvolvedObject.Name != "target" || started.InvolvedObject.UID != target.UID ||
		started.Source.Component != "cg-recorder" || started.Type != corev1.EventTypeNormal || started.Message != "the same message" {
		t.Errorf("recorded event %+v", started)
	}
	if started.FirstTimestamp.IsZero() || started.LastTimestamp.Before(&started.FirstTimestamp) {
		t.Errorf("timestamps first %v last %v", started.FirstTimestamp, started.LastTimestamp)
	}

	out := kubectl(t, env, "", "get", "events", "-n", "ev")
	for _, want := range []string{"REASON", "Started", "the same message", "configmap/target", "Warning", "(combined from similar events): message number 11"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get events lacks %q:\n%s", want, out)
		}
	}
	out = kubectl(t, env, "", "get", "events", "-n", "ev", "--field-selector", "reason=Started",
		"-o", "custom-columns=REASON:.reason,COUNT:.count,OBJECT:.involvedObject.name,MESSAGE:.message", "--no-headers")
	if fields := strings.Fields(out); strings.Join(fields, " ") != "Started 3 target the same message" {
		t.Errorf("kubectl get events --field-selector reason=Started: %q", out)
	}
}
