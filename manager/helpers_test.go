package manager_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

func newManager(t *testing.T, cfg *rest.Config, opts manager.Options) *manager.Manager {
	t.Helper()
	opts.Config = cfg
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := manager.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Client().CloseIdleConnections)
	return m
}

// started is a running manager.
type started struct {
	m      *manager.Manager
	cancel context.CancelFunc
	done   chan error
}

func start(m *manager.Manager) *started {
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- m.Start(ctx) }()
	return s
}

// stop cancels the manager and returns Start's error.
func (s *started) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("manager did not stop")
		return nil
	}
}

// recorder is a reconciler that notes when it ran.
type recorder struct {
	mu    sync.Mutex
	times []time.Time
	names map[string]int
}

func (r *recorder) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, time.Now())
	if r.names == nil {
		r.names = map[string]int{}
	}
	r.names[req.Name]++
	return reconcile.Result{}, nil
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[name]
}

func (r *recorder) snapshot() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.times...)
}

func addConfigMapController(t *testing.T, m *manager.Manager, r reconcile.Reconciler) {
	t.Helper()
	if err := builder.ControllerManagedBy(m).For(builder.Kind[*corev1.ConfigMap]()).Complete(r); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 20*time.Second, 10*time.Millisecond, what, testwait.Bool(cond))
}

// reconcileFunc adapts a function of the context to a Reconciler.
type reconcileFunc func(ctx context.Context)

func (f reconcileFunc) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	f(ctx)
	return reconcile.Result{}, nil
}

// waitClosed fails the test when ch is not closed within a minute.
func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("%s: not closed within a minute", what)
	}
}
