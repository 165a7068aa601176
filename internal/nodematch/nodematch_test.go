package nodematch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubernetes' toleration matching.
func TestTolerates(t *testing.T) {
	taint := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		tol  corev1.Toleration
		want bool
	}{
		{corev1.Toleration{Key: "k", Value: "v"}, true}, // operator defaults to Equal, any effect
		{corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "w"}, false},
		{corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, false},
		{corev1.Toleration{Operator: corev1.TolerationOpExists}, true}, // empty key + Exists: everything
		{corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "v"}, true},
		{corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists}, false},
		{corev1.Toleration{Key: "k", Operator: "Bogus"}, false},
	}
	for _, c := range cases {
		if got := Tolerates([]corev1.Toleration{c.tol}, &taint); got != c.want {
			t.Errorf("%+v tolerates %+v = %v, want %v", c.tol, taint, got, c.want)
		}
	}
}

func TestMatchesRequirement(t *testing.T) {
	req := func(op corev1.NodeSelectorOperator, vals ...string) *corev1.NodeSelectorRequirement {
		return &corev1.NodeSelectorRequirement{Key: "k", Operator: op, Values: vals}
	}
	cases := []struct {
		r    *corev1.NodeSelectorRequirement
		v    string
		ok   bool
		want bool
	}{
		{req(corev1.NodeSelectorOpIn, "a", "b"), "b", true, true},
		{req(corev1.NodeSelectorOpIn, "a"), "", false, false},
		{req(corev1.NodeSelectorOpNotIn, "a"), "", false, true},
		{req(corev1.NodeSelectorOpNotIn, "a"), "a", true, false},
		{req(corev1.NodeSelectorOpExists), "", true, true},
		{req(corev1.NodeSelectorOpDoesNotExist), "x", true, false},
		{req(corev1.NodeSelectorOpGt, "5"), "10", true, true},
		{req(corev1.NodeSelectorOpGt, "5"), "5", true, false},
		{req(corev1.NodeSelectorOpLt, "5"), "-1", true, true},
		{req(corev1.NodeSelectorOpLt, "5"), "x", true, false},
		{req(corev1.NodeSelectorOpGt, "1", "2"), "3", true, false},
	}
	for _, c := range cases {
		if got := MatchesRequirement(c.r, c.v, c.ok); got != c.want {
			t.Errorf("%s %v on %q (present %v) = %v, want %v", c.r.Operator, c.r.Values, c.v, c.ok, got, c.want)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"k": "a"}}}
	if MatchesTerm(&corev1.NodeSelectorTerm{}, node) {
		t.Error("an empty term matched")
	}
	byName := &corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}
	if !MatchesTerm(byName, node) {
		t.Error("metadata.name field term did not match")
	}
}

func TestHostPorts(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Ports: []corev1.ContainerPort{{HostPort: 1}}},
			{Name: "side", RestartPolicy: &always, Ports: []corev1.ContainerPort{{HostPort: 2, Protocol: corev1.ProtocolUDP}}},
		},
		Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{ContainerPort: 80}, {HostPort: 3, HostIP: "10.0.0.1"}}}},
	}}
	got := HostPorts(pod)
	want := []HostPort{{IP: AllHostIPs, Protocol: corev1.ProtocolUDP, Port: 2}, {IP: "10.0.0.1", Protocol: corev1.ProtocolTCP, Port: 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("HostPorts: %v, want %v (a plain init container's and a port without hostPort left out)", got, want)
	}
	tcp := func(ip string, port int32) HostPort {
		return HostPort{IP: ip, Protocol: corev1.ProtocolTCP, Port: port}
	}
	for _, tc := range []struct {
		a, b HostPort
		want bool
	}{
		{tcp("10.0.0.1", 80), tcp("10.0.0.1", 80), true},
		{tcp("10.0.0.1", 80), tcp("10.0.0.2", 80), false},
		{tcp(AllHostIPs, 80), tcp("10.0.0.2", 80), true},
		{tcp("10.0.0.2", 80), tcp(AllHostIPs, 80), true},
		{tcp(AllHostIPs, 80), tcp(AllHostIPs, 81), false},
		{tcp(AllHostIPs, 80), HostPort{IP: AllHostIPs, Protocol: corev1.ProtocolUDP, Port: 80}, false},
	} {
		if got := tc.a.Conflicts(tc.b); got != tc.want {
			t.Errorf("%v conflicts with %v: %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
