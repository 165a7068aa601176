package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Extended resources and ephemeral-storage are counted like cpu: a pod
// asking for a GPU goes to the node that has one and stays Pending when
// none is left; host ports are claimed once per node; a pod created with
// spec.nodeName is counted on its node.
func TestExtendedResourcesPortsAndNodeName(t *testing.T) {
	e := newEnv(t, Options{})
	gpu := zoneNode("gpu", "")
	gpu.extra = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	e.addNode(gpu)
	plain := zoneNode("plain", "")
	plain.extra = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	e.addNode(plain)

	e.createPod("g1", requesting("nvidia.com/gpu", "1"))
	if n := e.waitBound("g1"); n != "gpu" {
		t.Fatalf("g1 on %s, want gpu", n)
	}
	e.createPod("g2", requesting("nvidia.com/gpu", "2"))
	e.waitUnschedulable("g2", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."+
		" preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")
	e.createPod("dongle", requesting("example.com/dongle", "3"))
	e.waitUnschedulable("dongle", "0/2 nodes are available: 2 Insufficient example.com/dongle."+notHelpful(2, 2))
	e.createPod("disk", requesting(corev1.ResourceEphemeralStorage, "20Gi"))
	e.waitUnschedulable("disk", "0/2 nodes are available: 2 Insufficient ephemeral-storage."+notHelpful(2, 2))

	for _, name := range []string{"web-1", "web-2"} {
		e.createPod(name, hostPortOpt(8080))
		e.waitBound(name)
	}
	if b := e.boundTo(); len(b["gpu"]) != 2 || len(b["plain"]) != 1 {
		t.Fatalf("host-port pods not one per node: %v", b)
	}
	e.createPod("web-3", hostPortOpt(8080))
	e.waitUnschedulable("web-3", "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."+noVictims(2, 2))

	// A pod created bound takes its place: plain's 4 CPUs are used up.
	e.createPod("pinned", requests("3500m", ""), func(p *corev1.Pod) { p.Spec.NodeName = "plain" })
	e.createPod("big", requests("1", ""), onNode("plain"))
	e.waitUnschedulable("big", "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector."+
		" preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")
}

// Required anti-affinity on hostname puts 4 replicas on 3 nodes one per
// node and leaves the fourth Pending; a placed pod's anti-affinity keeps
// matching pods off its node.
func TestPodAntiAffinity(t *testing.T) {
	e := newEnv(t, Options{})
	for _, n := range []string{"n1", "n2", "n3"} {
		e.addNode(zoneNode(n, "z"))
	}
	for _, name := range []string{"web-0", "web-1", "web-2", "web-3"} {
		e.createPod(name, labeled("app", "web"), antiAffinityTo(term(corev1.LabelHostname, "web")))
	}
	e.eventually("three web pods bound, one per node", func() string {
		b := e.boundTo()
		if len(b[""]) != 1 || len(b["n1"]) != 1 || len(b["n2"]) != 1 || len(b["n3"]) != 1 {
			return fmt.Sprintf("placement %v", b)
		}
		return ""
	})
	pending := e.boundTo()[""][0]
	e.waitUnschedulable(pending, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."+noVictims(3, 3))
	e.waitEvent(pending, corev1.EventTypeWarning, "FailedScheduling", "3 node(s) didn't match pod anti-affinity rules")

	// A guard pod whose anti-affinity refuses app=cache on its node:
	e.createPod("guard", onNode("n1"), antiAffinityTo(term(corev1.LabelHostname, "cache")))
	e.waitBound("guard")
	e.createPod("cache", labeled("app", "cache"), onNode("n1"))
	e.waitUnschedulable("cache", "0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, "+
		"2 node(s) didn't match Pod's node affinity/selector."+
		" preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.")
}

// Required affinity with no matching pod stays Pending until one appears,
// then joins its zone; the first pod of a group with affinity to itself
// schedules.
func TestPodAffinity(t *testing.T) {
	e := newEnv(t, Options{})
	e.addNode(zoneNode("a1", "a"))
	e.addNode(zoneNode("b1", "b"))
	e.addNode(zoneNode("b2", "b"))
	e.createPod("app", affinityTo(term(corev1.LabelTopologyZone, "db")))
	e.waitUnschedulable("app", "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."+notHelpful(3, 3))
	e.createPod("db", labeled("app", "db"), onNode("b2"))
	e.waitBound("db")
	if n := e.waitBound("app"); n != "b1" && n != "b2" {
		t.Fatalf("app on %s, want zone b", n)
	}
	e.createPod("first", labeled("app", "group"), affinityTo(term(corev1.LabelHostname, "group")))
	first := e.waitBound("first")
	e.createPod("second", labeled("app", "group"), affinityTo(term(corev1.LabelHostname, "group")))
	if n := e.waitBound("second"); n != first {
		t.Fatalf("second on %s, want %s with first", n, first)
	}
}

// DoNotSchedule spreading keeps zones within maxSkew; nodeAffinityPolicy
// decides which domains count; a node without the key is refused.
func TestTopologySpread(t *testing.T) {
	e := newEnv(t, Options{})
	e.addNode(zoneNode("a1", "a"))
	e.addNode(zoneNode("b1", "b"))
	e.addNode(zoneNode("nozone", ""))
	for _, name := range []string{"s0", "s1", "s2", "s3"} {
		e.createPod(name, labeled("app", "s"), spread(corev1.LabelTopologyZone, 1, "s"))
		e.waitBound(name)
	}
	if b := e.boundTo(); len(b["a1"]) != 2 || len(b["b1"]) != 2 {
		t.Fatalf("spread placement %v", b)
	}
	// Two more in zone a only: with the default nodeAffinityPolicy Honor
	// zone b does not count and the pod fits; with Ignore zone b counts,
	// the skew would be 3 - 2 > 1 after the first.
	e.createPod("honor", labeled("app", "s"), onNode("a1"), spread(corev1.LabelTopologyZone, 1, "s"))
	e.waitBound("honor")
	ignore := corev1.NodeInclusionPolicyIgnore
	e.createPod("ignore", labeled("app", "s"), onNode("a1"), spread(corev1.LabelTopologyZone, 1, "s",
		func(c *corev1.TopologySpreadConstraint) { c.NodeAffinityPolicy = &ignore }))
	e.waitUnschedulable("ignore", "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, "+
		"2 node(s) didn't match Pod's node affinity/selector."+
		" preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.")
	e.createPod("keyless", labeled("app", "k"), onNode("nozone"), spread(corev1.LabelTopologyZone, 1, "k"))
	e.waitUnschedulable("keyless", "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), "+
		"2 node(s) didn't match Pod's node affinity/selector."+notHelpful(3, 3))
}

// A gated pod is not scheduled and says why; it is once its gates are
// removed.
func TestSchedulingGates(t *testing.T) {
	e := newEnv(t, Options{})
	e.addNode(zoneNode("n1", ""))
	p := e.createPod("gated", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	})
	c := scheduledCondition(p)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonSchedulingGated ||
		c.Message != "Scheduling is blocked due to non-empty scheduling gates" {
		t.Fatalf("created gated pod's condition %+v", c)
	}
	e.createPod("plain")
	e.waitBound("plain")
	time.Sleep(300 * time.Millisecond)
	if got := e.getPod("gated"); got.Spec.NodeName != "" {
		t.Fatalf("gated pod bound to %s", got.Spec.NodeName)
	}
	got := e.getPod("gated")
	got.Spec.SchedulingGates = nil
	if _, err := e.pods.Update(e.ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitBound("gated")
}
