package daemonset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeShouldRun checks the placement verdicts (shouldRun,
// shouldContinue) against nodes' labels, names and taints.
func TestNodeShouldRun(t *testing.T) {
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Value: "v", Effect: effect}
	}
	plain := newDS("d")
	selector := newDS("d")
	selector.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	named := newDS("d")
	named.Spec.Template.Spec.NodeName = "a"
	affinity := newDS("d")
	affinity.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}},
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"special"}}}},
		}}}}
	hostNet := newDS("d")
	hostNet.Spec.Template.Spec.HostNetwork = true
	tolerant := newDS("d")
	tolerant.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "v"}}
	for _, c := range []struct {
		name        string
		ds          *appsv1.DaemonSet
		node        *corev1.Node
		run, remain bool
	}{
		{"plain", plain, node("a", nil), true, true},
		{"selector matches", selector, node("a", map[string]string{"disk": "ssd"}), true, true},
		{"selector does not match", selector, node("a", map[string]string{"disk": "hdd"}), false, false},
		{"nodeName other", named, node("b", nil), false, false},
		{"nodeName same", named, node("a", nil), true, true},
		{"affinity by label", affinity, node("a", map[string]string{"zone": "z1"}), true, true},
		{"affinity by name", affinity, node("special", nil), true, true},
		{"affinity no term", affinity, node("a", map[string]string{"zone": "z2"}), false, false},
		{"NoSchedule untolerated", plain, node("a", nil, taint("gpu", corev1.TaintEffectNoSchedule)), false, true},
		{"NoExecute untolerated", plain, node("a", nil, taint("gpu", corev1.TaintEffectNoExecute)), false, false},
		{"PreferNoSchedule", plain, node("a", nil, taint("gpu", corev1.TaintEffectPreferNoSchedule)), true, true},
		{"tolerated by template", tolerant, node("a", nil, taint("gpu", corev1.TaintEffectNoExecute)), true, true},
		{"not-ready", plain, node("a", nil, taint(taintNotReady, corev1.TaintEffectNoExecute)), true, true},
		{"unreachable", plain, node("a", nil, taint(taintUnreachable, corev1.TaintEffectNoExecute)), true, true},
		{"disk-pressure", plain, node("a", nil, taint(taintDiskPressure, corev1.TaintEffectNoSchedule)), true, true},
		{"memory-pressure", plain, node("a", nil, taint(taintMemoryPressure, corev1.TaintEffectNoSchedule)), true, true},
		{"pid-pressure", plain, node("a", nil, taint(taintPIDPressure, corev1.TaintEffectNoSchedule)), true, true},
		{"unschedulable", plain, node("a", nil, taint(taintUnschedulable, corev1.TaintEffectNoSchedule)), true, true},
		{"network-unavailable", plain, node("a", nil, taint(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)), false, true},
		{"network-unavailable hostNetwork", hostNet, node("a", nil, taint(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)), true, true},
		{"memory-pressure NoExecute", plain, node("a", nil, taint(taintMemoryPressure, corev1.TaintEffectNoExecute)), false, false},
	} {
		run, remain := nodeShouldRun(c.node, c.ds)
		if run != c.run || remain != c.remain {
			t.Errorf("%s: shouldRun %v shouldContinue %v, want %v %v", c.name, run, remain, c.run, c.remain)
		}
	}
}

// TestDaemonTolerations: the daemon tolerations replace equal ones of the
// template and are added once.
func TestDaemonTolerations(t *testing.T) {
	spec := corev1.PodSpec{HostNetwork: true, Tolerations: []corev1.Toleration{
		{Key: taintNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "mine", Operator: corev1.TolerationOpExists},
	}}
	addDaemonTolerations(&spec)
	addDaemonTolerations(&spec)
	if len(spec.Tolerations) != 8 {
		t.Fatalf("%d tolerations: %+v", len(spec.Tolerations), spec.Tolerations)
	}
	if spec.Tolerations[0].Key != taintNotReady || spec.Tolerations[1].Key != "mine" || spec.Tolerations[7].Key != taintNetworkUnavailable {
		t.Fatalf("order: %+v", spec.Tolerations)
	}
}

// TestRevisionPatch: a revision stores the template under spec.template
// with "$patch": "replace", and nothing else of the DaemonSet.
func TestRevisionPatch(t *testing.T) {
	ds := newDS("p")
	ds.Spec.MinReadySeconds = 7
	b, err := revisionPatch(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"p"}},"spec":{"containers":[{"image":"img:1","name":"c","resources":{}}]}}}}`
	if string(b) != want {
		t.Fatalf("patch\n%s\nwant\n%s", b, want)
	}
}
