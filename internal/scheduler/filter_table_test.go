package scheduler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Each filter's reasons, worded as kube-scheduler's, and whether
// preemption could resolve them, on one node "n1" (zone a, 2 CPUs, one GPU,
// host port 80 taken, a web pod placed with anti-affinity against cache).
func TestFilterReasons(t *testing.T) {
	c := newSchedCache()
	c.setNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Labels: map[string]string{corev1.LabelHostname: "n1", corev1.LabelTopologyZone: "a"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("10"),
			"nvidia.com/gpu": resource.MustParse("1")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	placed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "web",
		Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	hostPortOpt(80)(placed)
	antiAffinityTo(term(corev1.LabelHostname, "cache"))(placed)
	requests("1", "")(placed)
	c.confirm(placed, "n1", demandOf(placed))
	nsOf := func(string) labels.Set { return nil }

	pod := func(opts ...podOpt) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
		for _, o := range opts {
			o(p)
		}
		return p
	}
	cases := []struct {
		name         string
		pod          *corev1.Pod
		want         []string
		unresolvable bool
	}{
		{"fits", pod(), nil, false},
		{"selector", pod(onNode("n2")), []string{reasonAffinity}, true},
		{"port", pod(hostPortOpt(80)), []string{reasonPorts}, false},
		{"cpu", pod(requests("1500m", "")), []string{"Insufficient cpu"}, false},
		{"cpu beyond allocatable", pod(requests("3", "")), []string{"Insufficient cpu"}, true},
		{"gpu", pod(requesting("nvidia.com/gpu", "2")), []string{"Insufficient nvidia.com/gpu"}, true},
		{"dongle", pod(requesting("example.com/dongle", "1")), []string{"Insufficient example.com/dongle"}, true},
		{"affinity", pod(affinityTo(term(corev1.LabelHostname, "db"))), []string{reasonPodAffinity}, true},
		{"self affinity", pod(labeled("app", "db"), affinityTo(term(corev1.LabelHostname, "db"))), nil, false},
		{"anti-affinity", pod(antiAffinityTo(term(corev1.LabelTopologyZone, "web"))), []string{reasonPodAntiAffinity}, false},
		{"existing anti-affinity", pod(labeled("app", "cache")), []string{reasonExistingAnti}, false},
		{"spread", pod(labeled("app", "web"), spread(corev1.LabelTopologyZone, 1, "web")), nil, false},
		{"spread missing key", pod(spread("example.com/rack", 1, "web")), []string{reasonSpreadMissing}, true},
	}
	for _, tc := range cases {
		d := demandOf(tc.pod)
		cy := &cycle{pod: tc.pod, d: &d, spread: newSpreadState(tc.pod, c), affinity: newAffinityState(tc.pod, c, nsOf)}
		got, unresolvable := cy.filterNode(c.nodes["n1"])
		if !slices.Equal(got, tc.want) || (got != nil && unresolvable != tc.unresolvable) {
			t.Errorf("%s: %q (unresolvable %v), want %q (%v)", tc.name, got, unresolvable, tc.want, tc.unresolvable)
		}
	}
}

// The message of a pod that fits nowhere, as kube-scheduler renders it.
func TestFitErrorMessage(t *testing.T) {
	cases := []struct {
		fe   fitError
		want string
	}{
		{fitError{}, "no nodes available to schedule pods"},
		{fitError{numNodes: 3, reasons: map[string]int{"Insufficient cpu": 1, reasonPodAntiAffinity: 2},
			postFilter: "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."},
			"0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod anti-affinity rules. " +
				"preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."},
		{fitError{numNodes: 2, preFilter: reasonUnboundImmediate, postFilter: "preemption: " + preemptNever},
			"0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible due to preemptionPolicy=Never."},
	}
	for _, c := range cases {
		if got := c.fe.Error(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}
