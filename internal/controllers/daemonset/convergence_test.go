package daemonset

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// TestRandomizedConvergence: on a fake clock, nodes are added, deleted,
// tainted and relabelled at random, pods' readiness flips, the template
// changes and the controller restarts. Every template change is a rollout
// from a settled state, watched throughout: never more than maxUnavailable
// eligible nodes without an available pod. At the end the DaemonSet must
// have exactly one pod, of its current template, on each eligible node and
// none elsewhere, with a status that says so.
func TestRandomizedConvergence(t *testing.T) {
	t.Parallel()
	// One seed per run (DS_SEED reproduces a run), so that successive runs
	// explore different histories within the package's time budget.
	seed := time.Now().UnixNano()
	if s := os.Getenv("DS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("DS_SEED: %v", err)
		}
	}
	{
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Logf("seed %d (DS_SEED=%d reproduces the sequence of operations)", seed, seed)
			rng := rand.New(rand.NewSource(seed))
			h := newHarness(t)
			// Three nodes in four are workers, so that rollouts span
			// several eligible nodes.
			role := func() string { return []string{"db", "worker", "worker", "worker"}[rng.Intn(4)] }
			next := 0
			addNode := func() {
				h.addNode(fmt.Sprintf("n%d", next), map[string]string{"role": role()})
				next++
			}
			for range 6 {
				addNode()
			}
			ds := newDS("rand")
			maxUnavailable := 2
			mu := intstr.FromInt32(int32(maxUnavailable))
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &mu
			ds.Spec.MinReadySeconds = 2
			ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
			ds = h.create(ds)
			image := 1
			for range 14 {
				names := h.nodeNames()
				switch op := rng.Intn(8); {
				case op == 0 || len(names) < 2 || len(h.eligible()) < 3:
					addNode()
				case op == 1:
					h.deleteNode(names[rng.Intn(len(names))])
				case op == 2:
					h.mutateNode(names[rng.Intn(len(names))], func(n *corev1.Node) {
						if len(n.Spec.Taints) > 0 {
							n.Spec.Taints = nil
							return
						}
						// NoExecute: the pod must go (a NoSchedule taint
						// would let it stay; TestPlacement covers that).
						n.Spec.Taints = []corev1.Taint{{Key: "chaos", Effect: corev1.TaintEffectNoExecute}}
					})
				case op == 3:
					h.mutateNode(names[rng.Intn(len(names))], func(n *corev1.Node) { n.Labels["role"] = role() })
				case op == 4:
					if pods := h.livePods(ds); len(pods) > 0 {
						p := pods[rng.Intn(len(pods))]
						h.setUnready(p.Name, !h.isUnready(p.Name))
					}
				case op == 5:
					h.restartController()
				case op == 6:
					h.clock.Step(time.Duration(rng.Intn(3000)) * time.Millisecond)
				default:
					image++
					h.rollout(ds, image, maxUnavailable, rng.Intn(2) == 0)
				}
				time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			}
			image++
			h.rollout(ds, image, maxUnavailable, false)
		})
	}
}

// nodeNames lists the nodes' names, sorted.
func (h *harness) nodeNames() []string {
	h.t.Helper()
	list, err := h.nodes.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// eligible lists the nodes labelled role=worker without taints (the test
// only places taints no daemon pod tolerates).
func (h *harness) eligible() []string {
	h.t.Helper()
	list, err := h.nodes.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, n := range list.Items {
		if n.Labels["role"] == "worker" && len(n.Spec.Taints) == 0 {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// settle makes every pod ready again and steps the clock until the
// DaemonSet runs exactly on the eligible nodes, all available.
func (h *harness) settle(ds *appsv1.DaemonSet) {
	h.t.Helper()
	h.mu.Lock()
	clear(h.unready)
	h.mu.Unlock()
	testwait.UntilEvery(h.t, 30*time.Second, 30*time.Millisecond, "settled", func() error {
		err := h.settledOn(ds.Name, h.eligible())
		if err != nil {
			h.clock.Step(500 * time.Millisecond)
		}
		return err
	})
}

// rollout settles, changes the image (restarting the controller midway if
// restart) and settles again, watching that at most maxUnavailable of the
// eligible nodes lack an available pod at any moment.
func (h *harness) rollout(ds *appsv1.DaemonSet, image, maxUnavailable int, restart bool) {
	h.t.Helper()
	h.settle(ds)
	nodes := h.eligible()
	w := h.watch(ds, nodes)
	h.mutate(ds.Name, setImage(fmt.Sprintf("img:%d", image)))
	if restart {
		time.Sleep(50 * time.Millisecond)
		h.restartController()
	}
	h.settle(ds)
	worst, pods, samples := w.result()
	h.t.Logf("rollout to img:%d on %d nodes: %d samples, at most %d unavailable, %d pods", image, len(nodes), samples, worst, pods)
	if worst > maxUnavailable {
		h.t.Fatalf("%d eligible nodes without an available pod during the rollout (maxUnavailable %d)", worst, maxUnavailable)
	}
}

// settledOn reports why DaemonSet name does not yet run exactly one
// available pod of its current template on each node of want (and none
// elsewhere), with a status saying so for its generation.
func (h *harness) settledOn(name string, want []string) error {
	ctx := context.Background()
	ds, err := h.dss.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	list, err := h.pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	byNode := map[string][]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != ds.UID {
			continue
		}
		if p.DeletionTimestamp != nil {
			return fmt.Errorf("pod %s still terminating", p.Name)
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	if got := sortedKeys(byNode); !slices.Equal(got, want) {
		return fmt.Errorf("pods on %v, want %v", got, want)
	}
	image := ds.Spec.Template.Spec.Containers[0].Image
	for _, n := range want {
		if len(byNode[n]) != 1 || byNode[n][0].Spec.Containers[0].Image != image {
			return fmt.Errorf("node %s: %d pods, not all of %s", n, len(byNode[n]), image)
		}
	}
	st, w := ds.Status, int32(len(want))
	if st.ObservedGeneration != ds.Generation || st.DesiredNumberScheduled != w || st.CurrentNumberScheduled != w ||
		st.NumberAvailable != w || st.UpdatedNumberScheduled != w || st.NumberMisscheduled != 0 || st.NumberUnavailable != 0 {
		return fmt.Errorf("status %+v at generation %d", st, ds.Generation)
	}
	return nil
}
