package podgc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	t     *testing.T
	ns    string
	clk   *clocktesting.FakeClock
	mgr   *manager.Manager
	pods  *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes *rest.Resource[*corev1.Node, *corev1.NodeList]
}

// start runs the collector against srv on a fake clock, in a namespace of
// the test's own; the test's end stops it and force-deletes the namespace's
// pods.
func start(t *testing.T, srv *testserver.Server, opts Options) *env {
	t.Helper()
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.RESTClient(t)
	e := &env{t: t, clk: clocktesting.NewFakeClock(time.Now()), mgr: mgr,
		ns:    strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")),
		pods:  rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes: rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false)}
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
	if _, err := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false).
		Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.Clock = e.clk
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		mgr.Client().CloseIdleConnections()
		list, err := e.pods.Namespace(e.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list.Items {
			if len(p.Finalizers) > 0 {
				p.Finalizers = nil
				_, _ = e.pods.Namespace(e.ns).Update(context.Background(), &p, metav1.UpdateOptions{})
			}
			_ = e.pods.Namespace(e.ns).Delete(context.Background(), p.Name, *metav1.NewDeleteOptions(0))
		}
	})
	return e
}

// pod creates a pod (bound to node unless "") and sets its phase.
func (e *env) pod(name, node string, phase corev1.PodPhase, mutate ...func(*corev1.Pod)) *corev1.Pod {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
	for _, m := range mutate {
		m(p)
	}
	out, err := e.pods.Namespace(e.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if phase != corev1.PodPending {
		out.Status = *p.Status.DeepCopy()
		out.Status.Phase = phase
		if out, err = e.pods.Namespace(e.ns).UpdateStatus(context.Background(), out, metav1.UpdateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// node creates a node with the given Ready status and taints.
func (e *env) node(name string, ready corev1.ConditionStatus, taints ...corev1.Taint) {
	e.t.Helper()
	n, err := e.nodes.Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Taints: taints}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "Test"}}
	if _, err := e.nodes.UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (e *env) exists(name string) bool {
	e.t.Helper()
	_, err := e.pods.Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return true
}

// stepUntil advances the fake clock by step (a pass every step when step
// is the check period), polling cond after each, until it holds.
func (e *env) stepUntil(what string, step time.Duration, cond func() bool) {
	e.t.Helper()
	e.clk.Step(step)
	err := testwait.PollStepping(e.t.Context(), 100, 200*time.Millisecond, 10*time.Millisecond,
		func() { e.clk.Step(step) }, testwait.Bool(cond))
	if err != nil {
		e.t.Fatalf("%s: not within 100 steps: %v", what, err)
	}
}

// settleFor advances the clock by step n times, pausing for passes to run.
func (e *env) settleFor(n int, step time.Duration) {
	for range n {
		e.clk.Step(step)
		time.Sleep(150 * time.Millisecond)
	}
}

func (e *env) counter(name, reason string) float64 {
	e.t.Helper()
	mfs, err := e.mgr.Registry().Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == e.ns && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPodGC runs the scenarios against one API server (its start is the
// slow part under -race).
func TestPodGC(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	t.Run("TerminatedThreshold", func(t *testing.T) { testTerminatedThreshold(t, srv) })
	t.Run("Orphaned", func(t *testing.T) { testOrphaned(t, srv) })
	t.Run("UnscheduledTerminating", func(t *testing.T) { testUnscheduledTerminating(t, srv) })
	t.Run("OutOfService", func(t *testing.T) { testOutOfService(t, srv) })
}

// testTerminatedThreshold: beyond the threshold, evicted pods go first,
// then the oldest; running pods are never counted.
func testTerminatedThreshold(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{TerminatedPodThreshold: 3})
	e.node("tt-node", corev1.ConditionTrue)
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		phase := corev1.PodSucceeded
		if i%2 == 1 {
			phase = corev1.PodFailed
		}
		e.pod(name, "tt-node", phase)
	}
	e.pod("run", "tt-node", corev1.PodRunning)
	e.pod("z-evicted", "tt-node", corev1.PodFailed, func(p *corev1.Pod) { p.Status.Reason = "Evicted" })
	e.stepUntil("terminated pods down to 3", DefaultGCCheckPeriod, func() bool {
		return !e.exists("z-evicted") && !e.exists("a") && !e.exists("b")
	})
	e.settleFor(2, DefaultGCCheckPeriod)
	for _, name := range []string{"c", "d", "e", "run"} {
		if !e.exists(name) {
			t.Errorf("pod %s deleted", name)
		}
	}
	if got := e.counter("pod_gc_collector_force_delete_pods_total", reasonTerminated); got < 3 {
		t.Errorf("force_delete_pods_total{reason=terminated} = %v, want >= 3", got)
	}
}

// testOrphaned: pods of a node that stays missing through the quarantine
// are marked Failed with DisruptionTarget, then deleted; a node that
// appears during the quarantine keeps its pods.
func testOrphaned(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{})
	e.node("or-here", corev1.ConditionTrue)
	e.pod("kept", "or-here", corev1.PodRunning)
	orphan := e.pod("orphan", "or-gone", corev1.PodRunning)
	e.pod("late", "or-late", corev1.PodRunning)

	var mu sync.Mutex
	var seen []string
	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.pods.Namespace(e.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: orphan.ResourceVersion,
		FieldSelector: "metadata.name=orphan"})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s %s %s", ev.Type, p.Status.Phase, disruption(p)))
				mu.Unlock()
			}
		}
	}()
	defer func() { cancel(); w.Stop(); <-watched }()

	// Passes at 20 s and 40 s after start: the first quarantines, the
	// second is 20 s into the quarantine.
	e.settleFor(2, DefaultGCCheckPeriod)
	if !e.exists("orphan") {
		t.Fatal("orphan deleted before its quarantine ended")
	}
	e.node("or-late", corev1.ConditionTrue)
	e.stepUntil("orphan deleted", DefaultGCCheckPeriod, func() bool { return !e.exists("orphan") })
	e.settleFor(3, DefaultGCCheckPeriod)
	if !e.exists("kept") || !e.exists("late") {
		t.Error("a pod of an existing node was deleted")
	}
	mu.Lock()
	got := strings.Join(seen, "; ")
	mu.Unlock()
	want := "MODIFIED Failed DeletionByPodGC/PodGC: node no longer exists"
	if !strings.Contains(got, want) || !strings.HasSuffix(got, "DELETED Failed DeletionByPodGC/PodGC: node no longer exists") {
		t.Errorf("orphan's watch: %s; want %q then DELETED", got, want)
	}
	if c := e.counter("pod_gc_collector_force_delete_pods_total", reasonOrphaned); c < 1 {
		t.Errorf("force_delete_pods_total{reason=orphaned} = %v, want >= 1", c)
	}
}

func disruption(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return c.Reason + "/" + c.Message
		}
	}
	return "-"
}

// testUnscheduledTerminating: a terminating pod never bound to a node is
// marked Failed and deleted with grace 0 (its finalizer still holds it).
func testUnscheduledTerminating(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{})
	e.pod("held", "", corev1.PodPending, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} })
	e.pod("pending", "", corev1.PodPending)
	if err := e.pods.Namespace(e.ns).Delete(context.Background(), "held", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatal(err)
	}
	e.stepUntil("held marked failed", DefaultGCCheckPeriod, func() bool {
		p, err := e.pods.Namespace(e.ns).Get(context.Background(), "held", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodFailed
	})
	if c := e.counter("pod_gc_collector_force_delete_pods_total", reasonUnscheduled); c < 1 {
		t.Errorf("force_delete_pods_total{reason=unscheduled} = %v", c)
	}
	if !e.exists("pending") {
		t.Error("a pending pod that is not terminating was deleted")
	}
}

// testOutOfService: terminating pods on a NotReady node with the
// out-of-service taint are force-deleted; on a Ready node with the taint
// they stay.
func testOutOfService(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{})
	taint := corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	e.node("oos-down", corev1.ConditionFalse, taint)
	e.node("oos-up", corev1.ConditionTrue, taint)
	for _, p := range []struct{ name, node string }{{"down", "oos-down"}, {"up", "oos-up"}, {"down-live", "oos-down"}} {
		e.pod(p.name, p.node, corev1.PodRunning)
	}
	for _, name := range []string{"down", "up"} {
		if err := e.pods.Namespace(e.ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
			t.Fatal(err)
		}
	}
	e.stepUntil("terminating pod on the out-of-service node deleted", DefaultGCCheckPeriod, func() bool { return !e.exists("down") })
	e.settleFor(2, DefaultGCCheckPeriod)
	if !e.exists("up") || !e.exists("down-live") {
		t.Error("deleted a pod on a Ready node, or one not terminating")
	}
	// A pass that runs before the informer shows the deletion tries again
	// (NotFound, not an error), and counts again, as in Kubernetes.
	if c := e.counter("pod_gc_collector_force_delete_pods_total", reasonOutOfService); c < 1 {
		t.Errorf("force_delete_pods_total{reason=out-of-service} = %v, want >= 1", c)
	}
	if c := e.counter("pod_gc_collector_force_delete_pod_errors_total", reasonOutOfService); c != 0 {
		t.Errorf("force_delete_pod_errors_total{reason=out-of-service} = %v, want 0", c)
	}
}
