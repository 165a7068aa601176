package rest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/rest"
)

// The tests in this file use an httptest server: the real API server cannot
// be made to answer 429, 5xx or Retry-After on demand. The fake server
// records the fake-clock time of every attempt, so the waits between
// attempts are asserted exactly, with no sleeping.

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type scripted struct {
	clock *clocktesting.FakeClock
	// answer returns the status and Retry-After ("" for none) of attempt n
	// (0-based); 200 answers carry a ConfigMap.
	answer func(n int) (int, string)

	mu       sync.Mutex
	attempts []time.Duration // fake time since epoch of each attempt
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	n := len(s.attempts)
	s.attempts = append(s.attempts, s.clock.Since(epoch))
	s.mu.Unlock()
	code, ra := s.answer(n)
	if ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code == http.StatusOK {
		_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
		return
	}
	_, _ = io.WriteString(w, "try later")
}

func (s *scripted) times() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.attempts...)
}

// fakeClient points a client with a fake clock at a scripted server.
func fakeClient(t *testing.T, cfg rest.Config, answer func(int) (int, string)) (*rest.Client, *scripted) {
	t.Helper()
	s := &scripted{clock: clocktesting.NewFakeClock(epoch), answer: answer}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg.Host, cfg.Clock = srv.URL, s.clock
	c, err := rest.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, s
}

// run calls f in a goroutine and advances clk in 100ms steps whenever
// something waits on it, until f returns.
func run(clk *clocktesting.FakeClock, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	for {
		select {
		case err := <-done:
			return err
		default:
		}
		if clk.HasWaiters() {
			clk.Step(100 * time.Millisecond)
		}
		runtime.Gosched()
	}
}

func TestRetryHonoursRetryAfterEvenForPost(t *testing.T) {
	c, s := fakeClient(t, rest.Config{}, func(n int) (int, string) {
		if n < 2 {
			return http.StatusTooManyRequests, "1"
		}
		return http.StatusOK, ""
	})
	var got *corev1.ConfigMap
	err := run(s.clock, func() (err error) {
		got, err = configMaps(c).Create(context.Background(), newCM("a", nil, nil), metav1.CreateOptions{})
		return err
	})
	if err != nil || got.Name != "a" {
		t.Fatalf("create = %v, %v", got, err)
	}
	want := []time.Duration{0, time.Second, 2 * time.Second}
	if got := s.times(); !equal(got, want) {
		t.Errorf("attempts at %v, want %v", got, want)
	}
}

func TestRetryBackoffForIdempotent5xxUntilMaxRetries(t *testing.T) {
	c, s := fakeClient(t, rest.Config{MaxRetries: 3}, func(int) (int, string) {
		return http.StatusServiceUnavailable, ""
	})
	err := run(s.clock, func() error {
		_, err := configMaps(c).Get(context.Background(), "a", metav1.GetOptions{})
		return err
	})
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("err = %v, want ServiceUnavailable", err)
	}
	want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond}
	if got := s.times(); !equal(got, want) {
		t.Errorf("attempts at %v, want %v", got, want)
	}
}

func TestNoRetryOfNonIdempotent5xx(t *testing.T) {
	c, s := fakeClient(t, rest.Config{}, func(int) (int, string) { return http.StatusInternalServerError, "" })
	ctx := context.Background()
	_, err := configMaps(c).Create(ctx, newCM("a", nil, nil), metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) {
		t.Errorf("create: %v, want InternalError", err)
	}
	_, err = configMaps(c).Patch(ctx, "a", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsInternalError(err) {
		t.Errorf("patch: %v, want InternalError", err)
	}
	if n := len(s.times()); n != 2 {
		t.Errorf("%d attempts for one POST and one PATCH, want 2", n)
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	c, s := fakeClient(t, rest.Config{}, func(int) (int, string) { return http.StatusTooManyRequests, "3600" })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := configMaps(c).Get(ctx, "a", metav1.GetOptions{})
		done <- err
	}()
	for !s.clock.HasWaiters() {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(s.times()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func TestRetryOfRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	clk := clocktesting.NewFakeClock(epoch)
	c, err := rest.New(&rest.Config{Host: "http://" + addr, Clock: clk, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	err = run(clk, func() error {
		_, err := configMaps(c).Create(context.Background(), newCM("a", nil, nil), metav1.CreateOptions{})
		return err
	})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused", err)
	}
	if waited := clk.Since(epoch); waited != 300*time.Millisecond {
		t.Errorf("waited %v across retries, want 300ms (backoff 100ms + 200ms)", waited)
	}
}

func TestClientRateLimit(t *testing.T) {
	c, s := fakeClient(t, rest.Config{QPS: 2, Burst: 2}, func(int) (int, string) { return http.StatusOK, "" })
	err := run(s.clock, func() error {
		for range 5 {
			if _, err := configMaps(c).Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []time.Duration{0, 0, 500 * ms, 1000 * ms, 1500 * ms}
	if got := s.times(); !equal(got, want) {
		t.Errorf("requests at %v, want %v", got, want)
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
