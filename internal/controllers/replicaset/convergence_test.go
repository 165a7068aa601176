package replicaset

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// createdPods watches pods with the test's own (undelayed) client and
// records every pod name ever added.
type createdPods struct {
	mu    sync.Mutex
	names map[string]bool
	stop  func()
	done  chan struct{}
}

func (h *harness) watchCreated() *createdPods {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := h.pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	c := &createdPods{names: map[string]bool{}, done: make(chan struct{})}
	c.stop = func() { cancel(); w.Stop(); <-c.done }
	go func() {
		defer close(c.done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				c.mu.Lock()
				c.names[p.Name] = true
				c.mu.Unlock()
			}
		}
	}()
	h.t.Cleanup(c.stop)
	return c
}

func (c *createdPods) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names)
}

// TestNoOverCreationWhenWatchLags: the controller's pod watch is slowed
// down (every read of its body waits), while the ReplicaSet is poked
// (annotation updates, each a sync) and scaled up in quick succession.
// A separate, prompt watch sees every pod ever created: exactly the final
// spec.replicas, never more, although the controller's cache was seen to
// lag behind the server.
func TestNoOverCreationWhenWatchLags(t *testing.T) {
	h := newHarness(t, Options{}, 150*time.Millisecond)
	created := h.watchCreated()
	h.create(newRS("lag", 10))
	lagged := false
	for i := range 40 {
		switch i {
		case 15:
			h.scale("lag", 18)
		case 25:
			h.scale("lag", 30)
		}
		h.mutate("lag", func(rs *appsv1.ReplicaSet) { rs.Annotations = map[string]string{"poke": fmt.Sprint(i)} })
		list, err := h.pods.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > h.r.podInf.Indexer().Len() {
			lagged = true
		}
	}
	h.waitPods("lag", 30)
	if !lagged {
		t.Fatal("the controller's cache never lagged behind the server: the test proves nothing")
	}
	h.eventually("watch caught up", func() error {
		if n := created.count(); n != 30 {
			return fmt.Errorf("%d pods created", n)
		}
		return nil
	})
	if n := h.transport.podPosts.Load(); n != 30 {
		t.Fatalf("%d creates issued, want 30", n)
	}
}

// TestRandomizedConvergence: random scale changes and random pod
// deletions, some with a lagging watch, then the ReplicaSet must settle on
// exactly spec.replicas active pods, all controlled by it, and no other
// active pod with its labels.
func TestRandomizedConvergence(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			h := newHarness(t, Options{}, time.Duration(seed%2)*40*time.Millisecond)
			ctx := context.Background()
			rs := h.create(newRS("r", int32(rng.Intn(8))))
			for range 30 {
				switch rng.Intn(3) {
				case 0:
					h.scale("r", int32(rng.Intn(16)))
				case 1:
					pods := h.activePods(rs)
					rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
					for _, p := range pods[:rng.Intn(len(pods)+1)] {
						_ = h.pods.Delete(ctx, p.Name, metav1.DeleteOptions{})
					}
				case 2:
					time.Sleep(time.Duration(rng.Intn(40)) * time.Millisecond)
				}
			}
			cur, err := h.rss.Get(ctx, "r", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := int(*cur.Spec.Replicas)
			h.waitPods("r", want)
			h.eventually("only controlled pods", func() error {
				list, err := h.pods.List(ctx, metav1.ListOptions{LabelSelector: "app=r"})
				if err != nil {
					return err
				}
				n := 0
				for i := range list.Items {
					p := &list.Items[i]
					if !podutil.IsPodActive(p) {
						continue
					}
					n++
					if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != rs.UID {
						return fmt.Errorf("pod %s not controlled by the ReplicaSet", p.Name)
					}
				}
				if n != want {
					return fmt.Errorf("%d active pods, want %d", n, want)
				}
				return nil
			})
		})
	}
}
