package nodeipam

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	t      *testing.T
	mgr    *manager.Manager
	nodes  *rest.Resource[*corev1.Node, *corev1.NodeList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]
}

// start runs the controller (and, with agentNodes > 0, simulated nodes
// named prefix0…) against srv; the test's end stops them and deletes every
// node.
func start(t *testing.T, srv *testserver.Server, opts Options, agentNodes int, prefix string) *env {
	t.Helper()
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.RESTClient(t)
	e := &env{t: t, mgr: mgr,
		nodes:  rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true)}
	var agent *nodeagent.Agent
	if agentNodes > 0 {
		if agent, err = nodeagent.New(mgr, nodeagent.Options{Count: agentNodes, NamePrefix: prefix}); err != nil {
			t.Fatal(err)
		}
	}
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
		if err := e.nodes.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete nodes: %v", err)
		}
	})
	if agent != nil {
		<-agent.Registered()
	}
	return e
}

func (e *env) create(name, cidr string) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if cidr != "" {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = cidr, []string{cidr}
	}
	if _, err := e.nodes.Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) eventually(what string, cond func() error) {
	e.t.Helper()
	testwait.UntilEvery(e.t, 20*time.Second, 20*time.Millisecond, what, cond)
}

// cidrOf waits until the node has a pod CIDR and returns it.
func (e *env) cidrOf(name string) string {
	e.t.Helper()
	var cidr string
	e.eventually("pod CIDR of "+name, func() error {
		n, err := e.nodes.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.PodCIDR == "" || len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != n.Spec.PodCIDR {
			return fmt.Errorf("podCIDR %q podCIDRs %v", n.Spec.PodCIDR, n.Spec.PodCIDRs)
		}
		cidr = n.Spec.PodCIDR
		return nil
	})
	return cidr
}

func (e *env) waitEvent(node, reason string) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("event %s on %s", reason, node), func() error {
		list, err := e.events.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		want := fmt.Sprintf("Node %s status is now: %s", node, reason)
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind == "Node" && ev.InvolvedObject.Name == node && ev.Reason == reason {
				if ev.Message != want || ev.Type != corev1.EventTypeWarning || ev.Source.Component != EventSource {
					return fmt.Errorf("event %s %q from %q, want Warning %q from %s", ev.Type, ev.Message, ev.Source.Component, want, EventSource)
				}
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(list.Items))
	})
}

func (e *env) gauge(name string) float64 {
	e.t.Helper()
	mfs, err := e.mgr.Registry().Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// TestNodeIPAM runs the scenarios against one API server.
func TestNodeIPAM(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	t.Run("AllocateAroundTaken", func(t *testing.T) { testAllocateAroundTaken(t, srv) })
	t.Run("ExhaustAndRelease", func(t *testing.T) { testExhaustAndRelease(t, srv) })
	t.Run("WithSimulatedNodes", func(t *testing.T) { testWithSimulatedNodes(t, srv) })
}

// testAllocateAroundTaken: a node without a CIDR gets the top /24 of the
// cluster CIDR unless a node holds it already; nodes with a CIDR keep it.
func testAllocateAroundTaken(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{}, 0, "")
	e.create("pre", "10.255.255.0/24")
	e.create("fresh", "")
	if got := e.cidrOf("fresh"); got != "10.255.254.0/24" {
		t.Errorf("fresh got %s, want 10.255.254.0/24 (the top one is taken)", got)
	}
	e.create("second", "")
	if got := e.cidrOf("second"); got != "10.255.253.0/24" {
		t.Errorf("second got %s, want 10.255.253.0/24", got)
	}
	if got := e.cidrOf("pre"); got != "10.255.255.0/24" {
		t.Errorf("pre changed to %s", got)
	}
	if got := e.gauge("node_ipam_controller_cirdset_max_cidrs"); got != 1<<15 {
		t.Errorf("cirdset_max_cidrs %v, want %d", got, 1<<15)
	}
	if got := e.gauge("node_ipam_controller_cidrset_cidrs_allocations_total"); got != 2 {
		t.Errorf("cidrs_allocations_total %v, want 2", got)
	}
}

// testExhaustAndRelease: with 4 node CIDRs, the fifth node gets
// CIDRNotAvailable until a node is deleted, then the freed CIDR.
func testExhaustAndRelease(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{ClusterCIDR: "10.64.0.0/22"}, 0, "")
	seen := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("ex-%d", i)
		e.create(name, "")
		c := e.cidrOf(name)
		if other, dup := seen[c]; dup {
			t.Fatalf("%s and %s both got %s", name, other, c)
		}
		seen[c] = name
	}
	e.create("ex-late", "")
	e.waitEvent("ex-late", "CIDRNotAvailable")
	if n, _ := e.nodes.Get(context.Background(), "ex-late", metav1.GetOptions{}); n.Spec.PodCIDR != "" {
		t.Fatalf("ex-late got %s from an exhausted range", n.Spec.PodCIDR)
	}
	freed := e.cidrOf("ex-2")
	if err := e.nodes.Delete(context.Background(), "ex-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := e.cidrOf("ex-late"); got != freed {
		t.Errorf("ex-late got %s, want the freed %s", got, freed)
	}
	if got := e.gauge("node_ipam_controller_cidrset_cidrs_releases_total"); got < 1 {
		t.Errorf("cidrs_releases_total %v", got)
	}
	if got := e.gauge("node_ipam_controller_cidrset_usage_cidrs"); got != 1 {
		t.Errorf("cidrset_usage_cidrs %v, want 1 (4 of 4)", got)
	}
}

// testWithSimulatedNodes: the simulated nodes number their /24s from the
// bottom of the cluster CIDR; in a range of 4, two of theirs leave exactly
// two for other nodes, never one of theirs.
func testWithSimulatedNodes(t *testing.T, srv *testserver.Server) {
	e := start(t, srv, Options{ClusterCIDR: "10.128.0.0/22"}, 2, "sim-")
	for i, want := range []string{"10.128.0.0/24", "10.128.1.0/24"} {
		if got := e.cidrOf(fmt.Sprintf("sim-%d", i)); got != want {
			t.Fatalf("simulated node %d has %s, want %s", i, got, want)
		}
	}
	got := map[string]bool{}
	for _, name := range []string{"user-a", "user-b"} {
		e.create(name, "")
		got[e.cidrOf(name)] = true
	}
	if !got["10.128.2.0/24"] || !got["10.128.3.0/24"] {
		t.Errorf("user nodes got %v, want 10.128.2.0/24 and 10.128.3.0/24", got)
	}
	e.create("user-c", "")
	e.waitEvent("user-c", "CIDRNotAvailable")
}
