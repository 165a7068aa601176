package statefulset

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// incarnation is one pod (one UID) of an ordinal, as the invariant
// watcher saw it.
type incarnation struct {
	uid       types.UID
	everReady bool
	gone      bool
}

// invariants watches the pods of one set with the test's own client and
// checks, in the server's order of events: never two live pods of one
// ordinal; under OrderedReady, a pod of ordinal i is created only when
// every ordinal from start to i-1 has a pod that has been Running and
// Ready — unless the test itself deleted that ordinal's last pod (the
// controller may not have seen that yet).
type invariants struct {
	set     string
	ordered bool
	start   func() int

	mu         sync.Mutex
	live       map[int]*incarnation
	deletedBy  map[types.UID]bool // pods the test deleted
	violations []string
	stop       func()
	done       chan struct{}
}

func (h *harness) watchInvariants(set string, ordered bool, start func() int) *invariants {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := h.pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	inv := &invariants{set: set, ordered: ordered, start: start, live: map[int]*incarnation{},
		deletedBy: map[types.UID]bool{}, done: make(chan struct{})}
	inv.stop = func() { cancel(); w.Stop(); <-inv.done }
	go func() {
		defer close(inv.done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				inv.observe(ev.Type, p)
			}
		}
	}()
	h.t.Cleanup(inv.stop)
	return inv
}

func (inv *invariants) observe(t watch.EventType, p *corev1.Pod) {
	parent, o := parentAndOrdinal(p)
	if parent != inv.set || o < 0 {
		return
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	cur := inv.live[o]
	switch t {
	case watch.Added:
		if cur != nil && !cur.gone && cur.uid != p.UID {
			inv.violations = append(inv.violations, fmt.Sprintf("two live pods of ordinal %d: %s and %s", o, cur.uid, p.UID))
		}
		if inv.ordered {
			for j := inv.start(); j < o; j++ {
				pj := inv.live[j]
				switch {
				case pj == nil:
					inv.violations = append(inv.violations, fmt.Sprintf("%s created while ordinal %d never existed", p.Name, j))
				case pj.gone && inv.deletedBy[pj.uid]:
				case pj.gone || !pj.everReady:
					inv.violations = append(inv.violations, fmt.Sprintf("%s created while ordinal %d was not ready (gone=%v)", p.Name, j, pj.gone))
				}
			}
		}
		inv.live[o] = &incarnation{uid: p.UID, everReady: isRunningAndReady(p)}
	case watch.Modified:
		if cur != nil && cur.uid == p.UID && isRunningAndReady(p) {
			cur.everReady = true
		}
	case watch.Deleted:
		if cur != nil && cur.uid == p.UID {
			cur.gone = true
		}
	}
}

func (inv *invariants) testDeleted(uid types.UID) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.deletedBy[uid] = true
}

func (inv *invariants) check(t *testing.T) {
	t.Helper()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, v := range inv.violations {
		t.Error(v)
	}
}

// TestRandomizedConvergence: on an OrderedReady set with minReadySeconds
// on a fake clock, random scale changes, template updates, partition
// changes, readiness flips, pod deletions and controller restarts, with
// the invariants watched throughout; then the set must settle with exactly
// its ordinals, all at the update revision, whose template is the spec's.
func TestRandomizedConvergence(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{time.Now().UnixNano() % 1000, 7} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewSource(seed))
			h := newHarness(t)
			ctx := context.Background()
			set := newSet("cv", int32(rng.Intn(4)), appsv1.OrderedReadyPodManagement)
			set.Spec.MinReadySeconds = 5
			set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: int32(rng.Intn(3))}
			start := int(set.Spec.Ordinals.Start)
			inv := h.watchInvariants("cv", true, func() int { return start })
			h.create(set)
			image := 1
			for step := range 20 {
				switch op := rng.Intn(10); op {
				case 0, 1:
					h.scale("cv", int32(rng.Intn(6)))
				case 2:
					image++
					h.setImage("cv", fmt.Sprintf("img:%d", image))
				case 3:
					part := int32(rng.Intn(4))
					h.mutate("cv", func(s *appsv1.StatefulSet) {
						s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &part}
					})
				case 4:
					if pods := h.podsOf("cv"); len(pods) > 0 {
						p := pods[rng.Intn(len(pods))]
						inv.testDeleted(p.UID)
						uid := p.UID
						_ = h.pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
					}
				case 5:
					if pods := h.podsOf("cv"); len(pods) > 0 {
						p := pods[rng.Intn(len(pods))]
						_ = h.setPodStatus(p.Name, corev1.PodRunning, rng.Intn(2) == 0)
					}
				case 6:
					if step%3 == 0 {
						h.restart()
					}
				default:
					// The kubelet catches up with some pods; time passes.
					for _, p := range h.podsOf("cv") {
						if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodRunning && rng.Intn(3) > 0 {
							_ = h.setPodStatus(p.Name, corev1.PodRunning, true)
						}
					}
					h.clock.Step(time.Duration(rng.Intn(8)) * time.Second)
				}
				time.Sleep(time.Duration(rng.Intn(60)) * time.Millisecond)
			}
			zero := int32(0)
			h.mutate("cv", func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &zero}
			})
			var final *appsv1.StatefulSet
			h.eventually("converged", func() error {
				h.readyAll("cv")
				h.clock.Step(6 * time.Second)
				h.poke("cv")
				s, err := h.sets.Get(ctx, "cv", metav1.GetOptions{})
				if err != nil {
					return err
				}
				n := int(*s.Spec.Replicas)
				st := s.Status
				if st.ObservedGeneration != s.Generation || int(st.Replicas) != n || int(st.AvailableReplicas) != n ||
					int(st.UpdatedReplicas) != n || st.CurrentRevision != st.UpdateRevision {
					return fmt.Errorf("status %+v", st)
				}
				pods := h.podsOf("cv")
				if len(pods) != n {
					return fmt.Errorf("pods %s, want %d", names(pods), n)
				}
				for i, p := range pods {
					if ordinalOf(p) != start+i || podRevision(p) != st.UpdateRevision || p.DeletionTimestamp != nil ||
						p.Spec.Containers[0].Image != fmt.Sprintf("img:%d", image) {
						return fmt.Errorf("pod %s at %s image %s", p.Name, podRevision(p), p.Spec.Containers[0].Image)
					}
				}
				final = s
				return nil
			})
			rev, err := h.revs.Get(ctx, final.Status.UpdateRevision, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			restored, err := applyRevision(final, rev)
			if err != nil || restored.Spec.Template.Spec.Containers[0].Image != fmt.Sprintf("img:%d", image) {
				t.Fatalf("update revision's template: %v", err)
			}
			inv.check(t)
		})
	}
}
