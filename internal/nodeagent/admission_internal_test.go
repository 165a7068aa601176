package nodeagent

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pods of one node due at the same time are decided together in creation
// order (then by name), whichever of them a worker looks at first: the
// older of two pods wanting the same host port runs, the younger is
// rejected; a pod not due yet waits for its own turn.
func TestDecideBatchCreationOrder(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	nodeObj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("4")}}}
	for _, first := range []string{"young", "old", "twin-b"} {
		n := &node{name: "node-0"}
		add := func(name string, created time.Time, seen time.Time) *podState {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name),
				CreationTimestamp: metav1.NewTime(created)},
				Spec: corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "c", Image: "nginx",
					Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}}}}}
			ps := newPodState(p, n, seen, 0)
			ps.pod = p
			n.track(types.NamespacedName{Namespace: "default", Name: name}, ps)
			return ps
		}
		states := map[string]*podState{
			"young":  add("young", t0.Add(2*time.Second), now.Add(-10*time.Second)),
			"old":    add("old", t0, now.Add(-10*time.Second)),
			"twin-b": add("twin-b", t0.Add(time.Second), now.Add(-10*time.Second)),
			"twin-a": add("twin-a", t0.Add(time.Second), now.Add(-10*time.Second)),
			"later":  add("later", t0, now.Add(-time.Second)), // not due: seen 1s ago
		}
		others := decideBatch(states[first], nodeObj, now, 10*time.Second)
		if !states["old"].admitted() || states["old"].rejected() {
			t.Errorf("first=%s: old not admitted", first)
		}
		for _, name := range []string{"twin-a", "twin-b", "young"} {
			if ps := states[name]; ps.admitted() || ps.rejectReason != "NodePorts" ||
				ps.rejectMsg != "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" {
				t.Errorf("first=%s: %s admitted=%v reason %q message %q", first, name, ps.admitted(), ps.rejectReason, ps.rejectMsg)
			}
		}
		if ps := states["later"]; ps.admitted() || ps.rejected() {
			t.Errorf("first=%s: a pod not due was decided", first)
		}
		var names []string
		for _, k := range others {
			names = append(names, k.Name)
		}
		slices.Sort(names)
		want := slices.DeleteFunc([]string{"old", "twin-a", "twin-b", "young"}, func(s string) bool { return s == first })
		if !slices.Equal(names, want) {
			t.Errorf("first=%s: others = %v, want %v", first, names, want)
		}
		// The pod not due is judged in its turn against the admitted one.
		decideBatch(states["later"], nodeObj, now.Add(10*time.Second), 10*time.Second)
		if states["later"].rejectReason != "NodePorts" {
			t.Errorf("first=%s: later = %q", first, states["later"].rejectReason)
		}
	}
}

// The kubelet's order of checks: the first failure is reported.
func TestAdmissionCheckOrder(t *testing.T) {
	nodeObj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", Labels: map[string]string{"zone": "a"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"),
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			"example.com/dongle": resource.MustParse("1")}}}
	pod := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-0",
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "c", Image: "nginx"}}}}
		mut(p)
		return p
	}
	req := func(rl corev1.ResourceList) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = rl }
	}
	for _, tc := range []struct {
		name, reason, message string
		pod                   *corev1.Pod
	}{
		{"fits", "", "", pod(func(*corev1.Pod) {})},
		{"os label", "PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
			pod(func(p *corev1.Pod) { p.Labels = map[string]string{corev1.LabelOSStable: "windows"} })},
		{"os field", "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS",
			pod(func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} })},
		{"memory before selector", "OutOfmemory", "Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824",
			pod(func(p *corev1.Pod) {
				req(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")})(p)
				p.Spec.NodeSelector = map[string]string{"zone": "b"}
			})},
		{"cpu before memory", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 1500, used: 0, capacity: 1000",
			pod(req(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourceCPU: resource.MustParse("1500m")}))},
		{"init container max", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000",
			pod(func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
			})},
		{"extended", "OutOfexample.com/dongle", "Node didn't have enough resource: example.com/dongle, requested: 2, used: 0, capacity: 1",
			pod(req(corev1.ResourceList{"example.com/dongle": resource.MustParse("2")}))},
		{"unknown extended ignored", "", "", pod(req(corev1.ResourceList{"example.com/cluster-level": resource.MustParse("5")}))},
		{"selector", "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
			pod(func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "b"} })},
		{"taint", "TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
			pod(func(p *corev1.Pod) { p.Spec.Tolerations = nil })},
	} {
		reason, msg := admissionCheck(tc.pod, nodeObj, nil)
		if reason != tc.reason || msg != tc.message {
			t.Errorf("%s: %q %q, want %q %q", tc.name, reason, msg, tc.reason, tc.message)
		}
	}
}
