package nodelifecycle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllers/nodelifecycle"
	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	t     *testing.T
	srv   *testserver.Server
	clk   *clocktesting.FakeClock
	agent *nodeagent.Agent
	pods  *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes *rest.Resource[*corev1.Node, *corev1.NodeList]
}

// start runs a server, an agent with two nodes and the controller, all on
// one fake clock.
func start(t *testing.T) *env {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	e := &env{t: t, srv: srv, clk: clocktesting.NewFakeClock(epoch),
		pods:  rest.For[*corev1.Pod, *corev1.PodList](mgr.Client(), corev1.SchemeGroupVersion.WithResource("pods"), true),
		nodes: rest.For[*corev1.Node, *corev1.NodeList](mgr.Client(), corev1.SchemeGroupVersion.WithResource("nodes"), false)}
	if e.agent, err = nodeagent.New(mgr, nodeagent.Options{Count: 2, Clock: e.clk}); err != nil {
		t.Fatal(err)
	}
	if err := nodelifecycle.Add(mgr, nodelifecycle.Options{Clock: e.clk}); err != nil {
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
	})
	<-e.agent.Registered()
	return e
}

// stepUntil advances the fake clock by step, then polls cond briefly,
// until it holds.
func (e *env) stepUntil(what string, step time.Duration, cond func() bool) {
	e.t.Helper()
	err := testwait.PollStepping(e.t.Context(), 300, 150*time.Millisecond, 5*time.Millisecond,
		func() { e.clk.Step(step) }, testwait.Bool(cond))
	if err != nil {
		e.t.Fatalf("%s did not happen (fake time %s): %v", what, e.clk.Since(epoch), err)
	}
}

func (e *env) bind(name, node string, tols ...corev1.Toleration) {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}, Tolerations: tols}}
	if _, err := e.pods.Namespace("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(&corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}})
	code, body, _ := e.srv.Do(e.t, http.MethodPost, fmt.Sprintf("/api/v1/namespaces/default/pods/%s/binding", name),
		"application/json", strings.NewReader(string(b)))
	if code != http.StatusCreated {
		e.t.Fatalf("bind: %d %s", code, body)
	}
}

func (e *env) pod(name string) *corev1.Pod {
	p, err := e.pods.Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return p
}

func (e *env) node(name string) *corev1.Node {
	n, err := e.nodes.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func ready(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func hasTaint(n *corev1.Node, key string, eff corev1.TaintEffect) *corev1.Taint {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].Key == key && n.Spec.Taints[i].Effect == eff {
			return &n.Spec.Taints[i]
		}
	}
	return nil
}

// A node that stops heartbeating turns Unknown after the grace period, is
// tainted unreachable, its pods turn not ready and are evicted after their
// toleration (60s, the default 300s, never); the healthy node is
// untouched. When the heartbeat resumes the taints go, Ready is True again
// and the kubelet finishes the evictions.
func TestDeadNodeLifecycle(t *testing.T) {
	e := start(t)
	unreachable := corev1.TaintNodeUnreachable
	e.bind("short", "node-1", corev1.Toleration{Key: unreachable, Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)})
	e.bind("default", "node-1")
	e.bind("forever", "node-1", corev1.Toleration{Key: unreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	e.bind("healthy", "node-0")
	for _, name := range []string{"short", "default", "forever", "healthy"} {
		e.stepUntil(name+" ready", 0, func() bool { p := e.pod(name); return p != nil && ready(p) == corev1.ConditionTrue })
	}

	e.agent.StopHeartbeat("node-1")
	e.stepUntil("node-1 unreachable", 5*time.Second, func() bool {
		n := e.node("node-1")
		return hasTaint(n, unreachable, corev1.TaintEffectNoExecute) != nil
	})
	n := e.node("node-1")
	r := nodeReady(n)
	if r.Status != corev1.ConditionUnknown || r.Reason != "NodeStatusUnknown" || r.Message != "Kubelet stopped posting node status." {
		t.Errorf("node-1 Ready = %+v", r)
	}
	if got := e.clk.Since(epoch); got < 40*time.Second {
		t.Errorf("node marked Unknown after %s, want >= 40s", got)
	}
	if hasTaint(n, unreachable, corev1.TaintEffectNoSchedule) == nil || hasTaint(n, unreachable, corev1.TaintEffectNoExecute).TimeAdded == nil {
		t.Errorf("node-1 taints = %+v", n.Spec.Taints)
	}
	tainted := hasTaint(n, unreachable, corev1.TaintEffectNoExecute).TimeAdded.Time
	if h := e.node("node-0"); nodeReady(h).Status != corev1.ConditionTrue || len(h.Spec.Taints) != 0 {
		t.Errorf("healthy node-0 changed: %+v %+v", nodeReady(h), h.Spec.Taints)
	}
	e.stepUntil("pods not ready", 5*time.Second, func() bool {
		return ready(e.pod("short")) == corev1.ConditionFalse && ready(e.pod("default")) == corev1.ConditionFalse
	})

	e.stepUntil("short evicted", 5*time.Second, func() bool { return e.pod("short").DeletionTimestamp != nil })
	if got := e.clk.Now().Sub(tainted); got < 60*time.Second {
		t.Errorf("short evicted %s after the taint, want >= 60s", got)
	}
	if e.pod("default").DeletionTimestamp != nil {
		t.Error("default evicted together with short")
	}
	e.stepUntil("default evicted", 10*time.Second, func() bool { return e.pod("default").DeletionTimestamp != nil })
	if got := e.clk.Now().Sub(tainted); got < 300*time.Second {
		t.Errorf("default evicted %s after the taint, want >= 300s", got)
	}
	if p := e.pod("forever"); p.DeletionTimestamp != nil {
		t.Error("pod tolerating forever was evicted")
	}
	if p := e.pod("healthy"); p.DeletionTimestamp != nil || ready(p) != corev1.ConditionTrue {
		t.Error("pod on the healthy node was touched")
	}

	e.agent.ResumeHeartbeat("node-1")
	e.stepUntil("node-1 healthy", 5*time.Second, func() bool {
		n := e.node("node-1")
		return len(n.Spec.Taints) == 0 && nodeReady(n).Status == corev1.ConditionTrue
	})
	e.stepUntil("evicted pods gone, the other ready again", 5*time.Second, func() bool {
		p := e.pod("forever")
		return e.pod("short") == nil && e.pod("default") == nil && p != nil && ready(p) == corev1.ConditionTrue
	})
}
