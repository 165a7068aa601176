package multiserver_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// load runs writers goroutines creating configmaps through r until stop is
// closed, recording acknowledged names and failed attempts.
type load struct {
	mu     sync.Mutex
	acked  []string
	errs   []error
	wg     sync.WaitGroup
	stop   chan struct{}
	prefix string
}

func startLoad(ctx context.Context, prefix string, rs []*configMaps, writers int) *load {
	l := &load{stop: make(chan struct{}), prefix: prefix}
	for w := range writers {
		r := rs[w%len(rs)]
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				name := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				_, err := r.Create(ctx, configMap(name, map[string]string{"k": name}), metav1.CreateOptions{})
				l.mu.Lock()
				if err != nil {
					l.errs = append(l.errs, err)
				} else {
					l.acked = append(l.acked, name)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// waitAcked waits until at least n writes are acknowledged.
func (l *load) waitAcked(t *testing.T, n int) {
	t.Helper()
	if testwait.Poll(t.Context(), 30*time.Second, 10*time.Millisecond, testwait.Bool(func() bool { return l.count() >= n })) == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("%s load: %d writes acknowledged in 30s, want %d; errors: %v", l.prefix, len(l.acked), n, l.errs)
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// finish stops the writers and returns what they recorded.
func (l *load) finish() ([]string, []error) {
	close(l.stop)
	l.wg.Wait()
	return slices.Clone(l.acked), slices.Clone(l.errs)
}

// TestClientFailsOverWhenAnAPIServerDies: a client configured with both
// replicas (Host: replica A behind a proxy, Hosts: replica B) runs 8
// writers and an informer. Replica A "crashes" (the proxy resets every
// connection and stops accepting) after 100 acknowledged writes. The load
// carries on through B: 200 more writes are acknowledged, at most one
// failure per writer (the requests in flight at the crash, which may or
// may not have been applied), no acknowledged write is missing from B,
// and the informer resumes through B and caches every acknowledged write.
func TestClientFailsOverWhenAnAPIServerDies(t *testing.T) {
	c := startEtcd(t)
	srv := startServers(t, c, 2)
	px := startProxy(t, srv[0].URL[len("https://"):])
	cfg := srv[1].RESTConfig(t)
	cfg.Host, cfg.Hosts = px.URL(), []string{srv[1].URL}
	client := newClient(t, cfg)
	r := cms(client)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	inf := informer.New[*corev1.ConfigMap, *corev1.ConfigMapList](r, informer.Options[*corev1.ConfigMap]{
		Resource: corev1.Resource("configmaps"),
	})
	var infDone sync.WaitGroup
	infDone.Add(1)
	go func() { defer infDone.Done(); inf.Run(ctx) }()
	defer infDone.Wait()
	defer cancel()

	const writers = 8
	l := startLoad(ctx, "load", []*configMaps{r}, writers)
	l.waitAcked(t, 100)
	if client.Host() != px.URL() {
		t.Fatalf("client uses %s before the crash, want replica A %s", client.Host(), px.URL())
	}
	px.Kill()
	atKill := l.count()
	l.waitAcked(t, atKill+200)
	acked, errs := l.finish()
	if client.Host() != srv[1].URL {
		t.Fatalf("client uses %s after the crash, want replica B %s", client.Host(), srv[1].URL)
	}
	t.Logf("%d writes acknowledged (%d at the crash), %d failed: %v", len(acked), atKill, len(errs), errs)
	if len(errs) > writers {
		t.Fatalf("%d failed writes, want at most %d (one in flight per writer): %v", len(errs), writers, errs)
	}
	if m := missing(acked, names(t, cms(only(t, srv[1])))); len(m) > 0 {
		t.Fatalf("replica B misses %d acknowledged writes: %v", len(m), m)
	}
	testwait.UntilEvery(t, 20*time.Second, 20*time.Millisecond, "informer has every acknowledged write", func() error {
		have := map[string]bool{}
		items, err := inf.Lister().List(nil)
		if err == nil {
			for _, cm := range items {
				have[cm.Name] = true
			}
		}
		if m := missing(acked, have); len(m) > 0 {
			return fmt.Errorf("informer misses %d acknowledged writes (last error %v): %v", len(m), inf.LastError(), m[:min(len(m), 10)])
		}
		return nil
	})
}

// TestEtcdLeaderKilledUnderLoad: 8 writers, half through each replica, and
// the etcd leader is killed after 100 acknowledged writes. Writes go on
// (200 more acknowledged); failures are allowed only as the etcd client
// reports them (a write cut off by the leader loss may or may not have
// been applied), and every acknowledged write is in a consistent list on
// both replicas — each served from that replica's watch cache, which
// followed etcd's watch across the member failure.
func TestEtcdLeaderKilledUnderLoad(t *testing.T) {
	c := startEtcd(t)
	srv := startServers(t, c, 2)
	ra, rb := cms(only(t, srv[0])), cms(only(t, srv[1]))
	ctx := t.Context()
	l := startLoad(ctx, "etcd", []*configMaps{ra, rb}, 8)
	l.waitAcked(t, 100)
	leader := leaderIndex(t, c)
	c.Kill(leader)
	atKill := l.count()
	l.waitAcked(t, atKill+200)
	acked, errs := l.finish()
	t.Logf("killed etcd member %d; %d writes acknowledged (%d at the kill), %d failed: %v", leader, len(acked), atKill, len(errs), errs)
	for i, r := range []*configMaps{ra, rb} {
		if m := missing(acked, names(t, r)); len(m) > 0 {
			t.Fatalf("replica %d misses %d acknowledged writes: %v", i, len(m), m)
		}
	}
}
