package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// stopped scheduler must have stopped its loop, flushes and writes.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitTimeout = 30 * time.Second

// env is a test server with a running manager and scheduler.
type env struct {
	t     *testing.T
	ctx   context.Context
	cfg   *rest.Config
	sched *Scheduler
	pods  *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes *rest.Resource[*corev1.Node, *corev1.NodeList]
	evs   *rest.Resource[*corev1.Event, *corev1.EventList]
}

// newEnv starts an API server, then a manager running a scheduler with
// opts; both stop at the end of the test.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	e := newServerEnv(t)
	e.startScheduler(opts)
	return e
}

// newServerEnv starts an API server only; startScheduler starts the
// scheduler later.
func newServerEnv(t *testing.T) *env {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	c := srv.RESTClient(t)
	return &env{t: t, ctx: t.Context(), cfg: srv.RESTConfig(t),
		pods:  rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default"),
		nodes: rest.For[*corev1.Node, *corev1.NodeList](c, corev1.SchemeGroupVersion.WithResource("nodes"), false),
		evs:   rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace("default"),
	}
}

// startScheduler runs a manager with a scheduler built with opts until the
// end of the test.
func (e *env) startScheduler(opts Options) {
	t := e.t
	t.Helper()
	mgr, err := manager.New(manager.Options{Config: e.cfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("manager did not stop")
		}
		mgr.Client().CloseIdleConnections()
	})
	e.sched = s
}

// nodeSpec describes a test node: allocatable (= capacity) and Ready
// status ("" for no Ready condition).
type nodeSpec struct {
	name          string
	cpu, memory   string
	pods          int
	ready         corev1.ConditionStatus
	labels        map[string]string
	taints        []corev1.Taint
	unschedulable bool
	// extra is more allocatable (extended resources, ephemeral-storage).
	extra corev1.ResourceList
}

// addNode creates the Node and sets its status through the status
// subresource, as a node agent would.
func (e *env) addNode(ns nodeSpec) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: ns.labels},
		Spec: corev1.NodeSpec{Taints: ns.taints, Unschedulable: ns.unschedulable}}
	n, err := e.nodes.Create(e.ctx, n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create node %s: %v", ns.name, err)
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(ns.cpu),
		corev1.ResourceMemory: resource.MustParse(ns.memory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(ns.pods), resource.DecimalSI),
	}
	for k, v := range ns.extra {
		rl[k] = v
	}
	n.Status.Capacity, n.Status.Allocatable = rl, rl
	if ns.ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ns.ready,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	}
	if _, err := e.nodes.UpdateStatus(e.ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("node %s status: %v", ns.name, err)
	}
}

// readyNode is a Ready node with 4 CPUs, 8Gi and 110 pods.
func readyNode(name string) nodeSpec {
	return nodeSpec{name: name, cpu: "4", memory: "8Gi", pods: 110, ready: corev1.ConditionTrue}
}

// podOpt adjusts a test pod.
type podOpt func(*corev1.Pod)

func requests(cpu, memory string) podOpt {
	return func(p *corev1.Pod) {
		rl := corev1.ResourceList{}
		if cpu != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		p.Spec.Containers[0].Resources.Requests = rl
	}
}

func ownedBy(uid types.UID) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs",
			UID: uid, Controller: new(true)}}
	}
}

func tolerating(tols ...corev1.Toleration) podOpt {
	return func(p *corev1.Pod) { p.Spec.Tolerations = tols }
}

func (e *env) createPod(name string, opts ...podOpt) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	for _, o := range opts {
		o(p)
	}
	p, err := e.pods.Create(e.ctx, p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create pod %s: %v", name, err)
	}
	return p
}

// eventually polls cond every 20ms until it returns "" (success) or the
// deadline passes, then fails with cond's last explanation.
func (e *env) eventually(what string, cond func() string) {
	e.t.Helper()
	testwait.UntilEvery(e.t, waitTimeout, 20*time.Millisecond, what, testwait.Reason(cond))
}

func (e *env) getPod(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.pods.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

// waitBound waits until the pod is bound and returns its node.
func (e *env) waitBound(name string) string {
	e.t.Helper()
	var node string
	e.eventually("pod "+name+" bound", func() string {
		p := e.getPod(name)
		if node = p.Spec.NodeName; node == "" {
			return fmt.Sprintf("unbound; conditions %+v", p.Status.Conditions)
		}
		return ""
	})
	return node
}

// waitUnschedulable waits until the pod says PodScheduled=False reason
// Unschedulable with message msg, and returns the pod.
func (e *env) waitUnschedulable(name, msg string) *corev1.Pod {
	e.t.Helper()
	var p *corev1.Pod
	e.eventually("pod "+name+" unschedulable", func() string {
		p = e.getPod(name)
		c := scheduledCondition(p)
		switch {
		case p.Spec.NodeName != "":
			e.t.Fatalf("pod %s bound to %s, want unschedulable", name, p.Spec.NodeName)
		case c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable || c.Message != msg:
			return fmt.Sprintf("condition %+v, want message %q", c, msg)
		}
		return ""
	})
	return p
}

// waitEvent waits for an event about the pod with the reason and a
// message containing msg.
func (e *env) waitEvent(pod, evType, reason, msg string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%s event %s %q about %s", evType, reason, msg, pod), func() string {
		l, err := e.evs.List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		var seen []string
		for _, ev := range l.Items {
			if ev.InvolvedObject.Name != pod || ev.InvolvedObject.Kind != "Pod" {
				continue
			}
			if ev.Type == evType && ev.Reason == reason && strings.Contains(ev.Message, msg) &&
				ev.Source.Component == corev1.DefaultSchedulerName {
				return ""
			}
			seen = append(seen, ev.Reason+": "+ev.Message)
		}
		return fmt.Sprintf("events seen: %q", seen)
	})
}

// boundCounts lists the pods and counts them per node ("" = unbound).
func (e *env) boundCounts() map[string]int {
	e.t.Helper()
	l, err := e.pods.List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range l.Items {
		out[p.Spec.NodeName]++
	}
	return out
}
