package nodeagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/cluster"
	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
)

// env is a test server, a client, and an agent running on a manager.
type env struct {
	t     testing.TB
	srv   *testserver.Server
	clk   *clocktesting.FakeClock
	agent *nodeagent.Agent
	pods  *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes *rest.Resource[*corev1.Node, *corev1.NodeList]
	lease *rest.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// startEnv starts a server and an agent with opts (fake clock unless
// opts.Clock is set) and waits until its nodes are registered.
func startEnv(t testing.TB, opts nodeagent.Options) *env {
	t.Helper()
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgent(opts)
	return e
}

// startAgent starts an agent with opts against e's server (a fake clock
// at epoch unless opts has one) and waits for its nodes to register.
func (e *env) startAgent(opts nodeagent.Options) { e.startAgentWrapped(opts, nil) }

// startAgentWrapped is startAgent with the manager's transport wrapped.
func (e *env) startAgentWrapped(opts nodeagent.Options, wrap func(http.RoundTripper) http.RoundTripper) {
	t, srv := e.t, e.srv
	t.Helper()
	if opts.Clock == nil {
		e.clk = clocktesting.NewFakeClock(epoch)
		opts.Clock = e.clk
	}
	mgr := newManagerWrapped(t, srv, wrap)
	a, err := nodeagent.New(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.agent = a
	run(t, mgr)
	select {
	case <-a.Registered():
	case <-time.After(30 * time.Second):
		t.Fatal("nodes not registered")
	}
}

func newEnv(t testing.TB, srv *testserver.Server) *env {
	c := srv.RESTClient(t)
	return &env{t: t, srv: srv,
		pods:  rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes: rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		lease: rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, leasesGVR, true).Namespace(nodeagent.LeaseNamespace),
	}
}

func newManager(t testing.TB, srv *testserver.Server) *manager.Manager {
	t.Helper()
	return newManagerWrapped(t, srv, nil)
}

func newManagerWrapped(t testing.TB, srv *testserver.Server, wrap func(http.RoundTripper) http.RoundTripper) *manager.Manager {
	t.Helper()
	cfg := srv.RESTConfig(t)
	cfg.WrapTransport = wrap
	m, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Client().CloseIdleConnections)
	return m
}

// run starts mgr until the test ends.
func run(t testing.TB, mgr *manager.Manager) {
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
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
}

// eventually polls cond until it holds or 20 s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 20*time.Second, 10*time.Millisecond, what, testwait.Bool(cond))
}

// stepUntil advances the fake clock by step, then polls cond briefly,
// until cond holds (at most 200 steps).
func (e *env) stepUntil(what string, step time.Duration, cond func() bool) {
	e.t.Helper()
	if cond() {
		return
	}
	e.clk.Step(step)
	err := testwait.PollStepping(e.t.Context(), 200, 100*time.Millisecond, 5*time.Millisecond,
		func() { e.clk.Step(step) }, testwait.Bool(cond))
	if err != nil {
		e.t.Fatalf("%s did not happen after 200 steps of %s: %v", what, step, err)
	}
}

func ctx() context.Context { return context.Background() }

// withCommand gives every container of p a command, so that under
// restartPolicy Never or OnFailure its containers end by themselves.
func withCommand(p *corev1.Pod) *corev1.Pod {
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].Command = []string{"true"}
	}
	return p
}

// newPod returns a pod with the given containers (name=image).
func newPod(name string, policy corev1.RestartPolicy, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{RestartPolicy: policy}}
	for _, c := range containers {
		n, img, _ := strings.Cut(c, "=")
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: img})
	}
	return p
}

// createBound creates the pod and binds it to node through
// pods/<name>/binding, as the scheduler does.
func (e *env) createBound(p *corev1.Pod, node string) *corev1.Pod {
	e.t.Helper()
	if _, err := e.pods.Namespace(p.Namespace).Create(ctx(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("create pod %s: %v", p.Name, err)
	}
	b, _ := json.Marshal(&corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}})
	code, body, _ := e.srv.Do(e.t, http.MethodPost, fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/binding", p.Namespace, p.Name),
		"application/json", strings.NewReader(string(b)))
	if code != http.StatusCreated {
		e.t.Fatalf("bind %s: %d %s", p.Name, code, body)
	}
	return e.getPod(p.Name)
}

func (e *env) getPod(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.pods.Namespace("default").Get(ctx(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

// waitPod waits until cond holds for the pod and returns it.
func (e *env) waitPod(name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	e.t.Helper()
	var last *corev1.Pod
	eventually(e.t, name+": "+what, func() bool {
		p, err := e.pods.Namespace("default").Get(ctx(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = p
		return cond(p)
	})
	return last
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && podReady(p) }

func podReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeCredentials gives each node a client certificate of
// system:node:<name> in system:nodes, signed by the server's CA, as
// setpoint up does.
func nodeCredentials(t testing.TB, srv *testserver.Server) func(string) (*rest.Config, error) {
	t.Helper()
	ca, err := pki.LoadCA(srv.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return cluster.NodeCredentials(srv.RESTConfig(t), ca)
}
