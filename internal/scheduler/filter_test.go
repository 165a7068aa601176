package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ctr(cpu, mem string) corev1.Container {
	rl := corev1.ResourceList{}
	if cpu != "" {
		rl[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		rl[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: rl}}
}

// The pod request is the larger of the containers' sum (sidecars
// included) and the largest init container (with the sidecars started
// before it), plus overhead; non-zero requests fill in defaults.
func TestDemandOf(t *testing.T) {
	sidecar := ctr("200m", "")
	sidecar.RestartPolicy = new(corev1.ContainerRestartPolicyAlways)
	cases := []struct {
		name       string
		spec       corev1.PodSpec
		cpu, mem   int64
		nzCPU, nzM int64
	}{
		{"best effort", corev1.PodSpec{Containers: []corev1.Container{ctr("", "")}}, 0, 0, 100, 200 << 20},
		{"sum", corev1.PodSpec{Containers: []corev1.Container{ctr("100m", "1Mi"), ctr("250m", "")}},
			350, 1 << 20, 350, 1<<20 + 200<<20},
		{"init larger", corev1.PodSpec{InitContainers: []corev1.Container{ctr("2", "10Mi")},
			Containers: []corev1.Container{ctr("100m", "20Mi")}}, 2000, 20 << 20, 2000, 20 << 20},
		{"sidecar adds, and counts under later init", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar, ctr("1", "")},
			Containers:     []corev1.Container{ctr("100m", "")}}, 1200, 0, 1200, 400 << 20},
		{"overhead", corev1.PodSpec{Containers: []corev1.Container{ctr("100m", "1Mi")},
			Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}, 150, 1 << 20, 150, 1 << 20},
	}
	for _, c := range cases {
		d := demandOf(&corev1.Pod{Spec: c.spec})
		if d.request != (resources{c.cpu, c.mem}) || d.nonZero != (resources{c.nzCPU, c.nzM}) {
			t.Errorf("%s: request %+v nonZero %+v, want {%d %d} {%d %d}", c.name, d.request, d.nonZero, c.cpu, c.mem, c.nzCPU, c.nzM)
		}
	}
	owned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{UID: "other"}, {UID: "rs", Controller: new(true)}}}}
	if d := demandOf(owned); d.owner != "rs" {
		t.Errorf("owner %q, want the controller rs", d.owner)
	}
}

// The cache counts assumed pods, moves a pod confirmed on another node,
// keeps a confirmed pod on forget, and releases on remove.
func TestCacheAccounting(t *testing.T) {
	c := newSchedCache()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourcePods: resource.MustParse("3")}}}
	c.setNode(n)
	d := podDemand{request: resources{milliCPU: 300}, nonZero: resources{milliCPU: 300, memory: 1}, owner: "rs"}
	p1 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p1"}}
	p2 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "p2"}}
	c.assume(p1, "a", d)
	c.assume(p2, "a", d)
	if a := c.nodes["a"]; a.podCount != 2 || a.requested.milliCPU != 600 || a.byOwner["rs"] != 2 {
		t.Fatalf("after two assumes: %+v", a)
	}
	if r, unres := insufficient(&podDemand{request: resources{milliCPU: 500}}, c.nodes["a"]); len(r) != 1 || r[0] != reasonCPU || unres {
		t.Fatalf("500m on 400m free: %v (unresolvable %v)", r, unres)
	}
	c.confirm(p1, "b", d) // bound elsewhere
	if c.assume(p1, "a", d) {
		t.Fatal("assume accepted a pod confirmed bound")
	}
	c.forget("p2")
	c.forget("p1") // confirmed: stays
	if a := c.nodes["a"]; a.podCount != 0 || a.requested.milliCPU != 0 || len(a.byOwner) != 0 {
		t.Fatalf("node a after moves: %+v", a)
	}
	if b := c.nodes["b"]; b == nil || b.podCount != 1 || b.node != nil {
		t.Fatalf("node b (no object yet): %+v", b)
	}
	c.remove("p1")
	if _, ok := c.nodes["b"]; ok {
		t.Fatal("empty node without object kept")
	}
	c.removeNode("a")
	if c.knownNodes != 0 || len(c.nodes) != 0 {
		t.Fatalf("known %d, nodes %v", c.knownNodes, c.nodes)
	}
}
