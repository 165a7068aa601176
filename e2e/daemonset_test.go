package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

const daemonSetManifest = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: busybox:1.36
`

// dsWatch follows the DaemonSet's pods through a watch and checks, at
// every event: never two live (not terminating) pods on one node; and,
// while checking is on, at most maxUnavailable of the watched nodes
// without a live, ready pod.
type dsWatch struct {
	mu sync.Mutex
	// pods holds the live pods by name.
	pods map[string]*corev1.Pod
	// nodes is the set checked for availability; nil while off.
	nodes          []string
	maxUnavailable int
	worst, events  int
	violations     []string
}

func (w *dsWatch) apply(ev watch.Event) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
		delete(w.pods, p.Name)
	} else {
		w.pods[p.Name] = p
	}
	perNode := map[string]int{}
	ready := map[string]bool{}
	for _, q := range w.pods {
		if q.Spec.NodeName == "" {
			continue
		}
		perNode[q.Spec.NodeName]++
		if perNode[q.Spec.NodeName] > 1 {
			w.violations = append(w.violations, fmt.Sprintf("two live pods on %s", q.Spec.NodeName))
		}
		ready[q.Spec.NodeName] = ready[q.Spec.NodeName] || podReady(q)
	}
	if w.nodes == nil {
		return
	}
	unavailable := 0
	for _, n := range w.nodes {
		if !ready[n] {
			unavailable++
		}
	}
	w.worst = max(w.worst, unavailable)
	if unavailable > w.maxUnavailable {
		w.violations = append(w.violations, fmt.Sprintf("%d nodes without a ready pod (maxUnavailable %d)", unavailable, w.maxUnavailable))
	}
}

func (w *dsWatch) check(nodes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nodes = nodes
}

// TestUpDaemonSetLife: with real kubectl against `setpoint up --nodes 3`, a
// DaemonSet runs one pod per node, rolls out an image change and rolls it
// back (kubectl rollout status, history, undo) without ever leaving more
// than maxUnavailable nodes without a ready pod nor two pods on one node
// (a watch checks every event), re-adopts its pods and revisions after a
// --cascade=orphan deletion and re-apply without replacing a pod, puts a
// pod on a node added later by a separate `setpoint node` process, and its
// deletion removes its pods and revisions.
func TestUpDaemonSetLife(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 3)
	c := restClient(t, cl.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &dsWatch{pods: map[string]*corev1.Pod{}, maxUnavailable: 1}
	wi, err := podsOf(c).Namespace("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev := range wi.ResultChan() {
			w.apply(ev)
		}
	}()
	defer func() { wi.Stop(); <-watchDone }()

	cl.kubectl(t, daemonSetManifest, "apply", "-f", "-")
	cl.kubectl(t, "", "rollout", "status", "daemonset/agent", "--timeout=60s")
	nodes := []string{"node-0", "node-1", "node-2"}
	waitAgents(t, c, nodes, "busybox:1.36")
	w.check(nodes)

	cl.kubectl(t, "", "set", "image", "daemonset/agent", "agent=busybox:1.37")
	cl.kubectl(t, "", "rollout", "status", "daemonset/agent", "--timeout=60s")
	waitAgents(t, c, nodes, "busybox:1.37")
	hist := cl.kubectl(t, "", "rollout", "history", "daemonset/agent")
	if !strings.Contains(hist, "\n1 ") || !strings.Contains(hist, "\n2 ") {
		t.Fatalf("rollout history:\n%s", hist)
	}
	if out := cl.kubectl(t, "", "rollout", "history", "daemonset/agent", "--revision=1"); !strings.Contains(out, "busybox:1.36") {
		t.Fatalf("rollout history --revision=1:\n%s", out)
	}
	cl.kubectl(t, "", "rollout", "undo", "daemonset/agent")
	cl.kubectl(t, "", "rollout", "status", "daemonset/agent", "--timeout=60s")
	waitAgents(t, c, nodes, "busybox:1.36")
	hist = cl.kubectl(t, "", "rollout", "history", "daemonset/agent")
	if !strings.Contains(hist, "\n2 ") || !strings.Contains(hist, "\n3 ") || strings.Contains(hist, "\n1 ") {
		t.Fatalf("rollout history after undo:\n%s", hist)
	}
	w.check(nil)

	// Orphan and re-adopt: the DaemonSet goes with --cascade=orphan, its
	// pods and revisions stay; the same manifest applied again adopts them
	// (the template equals the current revision's) and replaces no pod.
	before := agentPodNames(t, c)
	cl.kubectl(t, "", "delete", "daemonset/agent", "--cascade=orphan")
	eventually(t, 60*time.Second, "pods orphaned", func() string {
		list, err := podsOf(c).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return err.Error()
		}
		for _, p := range list.Items {
			if metav1.GetControllerOf(&p) != nil {
				return "pod " + p.Name + " still controlled"
			}
		}
		return ""
	})
	cl.kubectl(t, daemonSetManifest, "apply", "-f", "-")
	cl.kubectl(t, "", "rollout", "status", "daemonset/agent", "--timeout=60s")
	eventually(t, 30*time.Second, "pods adopted", func() string {
		list, err := podsOf(c).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return err.Error()
		}
		for _, p := range list.Items {
			if metav1.GetControllerOf(&p) == nil {
				return "pod " + p.Name + " not adopted"
			}
		}
		return ""
	})
	if after := agentPodNames(t, c); after != before {
		t.Fatalf("re-adoption replaced pods: %s, then %s", before, after)
	}
	if hist = cl.kubectl(t, "", "rollout", "history", "daemonset/agent"); !strings.Contains(hist, "\n2 ") || !strings.Contains(hist, "\n3 ") {
		t.Fatalf("rollout history after re-adoption:\n%s", hist)
	}

	// A node joins: a separate simulated-node process against the running
	// cluster (`setpoint up` has no command to add nodes to itself).
	startProc(t, "extra node", "node", "--kubeconfig", cl.kubeconfig, "--nodes", "1", "--name-prefix", "extra-")
	nodes = append(nodes, "extra-0")
	waitAgents(t, c, nodes, "busybox:1.36")
	cl.kubectl(t, "", "rollout", "status", "daemonset/agent", "--timeout=60s")
	status := cl.kubectl(t, "", "get", "daemonset/agent", "-o",
		"jsonpath={.status.desiredNumberScheduled} {.status.numberAvailable} {.status.updatedNumberScheduled}")
	if status != "4 4 4" {
		t.Fatalf("status desired/available/updated: %q", status)
	}

	cl.kubectl(t, "", "delete", "daemonset/agent")
	crs := rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c, appsv1.SchemeGroupVersion.WithResource("controllerrevisions"), true)
	eventually(t, 60*time.Second, "pods and revisions collected", func() string {
		pods, err := podsOf(c).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return err.Error()
		}
		revs, err := crs.Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(pods.Items)+len(revs.Items) > 0 {
			return fmt.Sprintf("%d pods, %d revisions left", len(pods.Items), len(revs.Items))
		}
		return ""
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("watch: %d events, at most %d nodes without a ready pod during the rollouts", w.events, w.worst)
	if len(w.violations) > 0 {
		t.Fatalf("invariants broken: %v", w.violations)
	}
}

// agentPodNames returns the sorted names of the agent pods.
func agentPodNames(t *testing.T, c *rest.Client) string {
	t.Helper()
	list, err := podsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// waitAgents waits until each of nodes runs exactly one ready agent pod
// with image, and no other node runs one.
func waitAgents(t *testing.T, c *rest.Client, nodes []string, image string) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("one %s agent on each of %v", image, nodes), func() string {
		list, err := podsOf(c).Namespace("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return err.Error()
		}
		per := map[string]int{}
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				return "pod " + p.Name + " terminating"
			}
			if p.Spec.Containers[0].Image != image || !podReady(&p) {
				return fmt.Sprintf("pod %s: %s, ready %v", p.Name, p.Spec.Containers[0].Image, podReady(&p))
			}
			per[p.Spec.NodeName]++
		}
		if len(per) != len(nodes) {
			return fmt.Sprintf("pods on %v", per)
		}
		for _, n := range nodes {
			if per[n] != 1 {
				return fmt.Sprintf("pods on %v", per)
			}
		}
		return ""
	})
}
