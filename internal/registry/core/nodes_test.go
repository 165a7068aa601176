package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func storedNode(t *testing.T) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "7"},
		Spec:       corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	expectValid(t, create(lookup(t, "nodes"), n))
	return n
}

func TestNodeCreate(t *testing.T) {
	n := storedNode(t)
	if len(n.Status.Conditions) != 1 {
		t.Error("create dropped the posted status")
	}
	if n.Status.Allocatable.Cpu().String() != "4" {
		t.Errorf("allocatable %v, want capacity", n.Status.Allocatable)
	}
	if len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != "10.244.1.0/24" {
		t.Errorf("podCIDRs %v", n.Spec.PodCIDRs)
	}
	expectFields(t, lookup(t, "nodes"), n, fields.Set{"metadata.name": "node-1", "spec.unschedulable": "false"})
}

func TestNodeValidation(t *testing.T) {
	r := lookup(t, "nodes")
	for name, c := range map[string]struct {
		mutate func(*corev1.Node)
		want   []string
	}{
		"bad name":     {func(n *corev1.Node) { n.Name = "Node_1" }, []string{"metadata.name:FieldValueInvalid"}},
		"bad cidr":     {func(n *corev1.Node) { n.Spec.PodCIDR = "10.0.0.0/33" }, []string{"spec.podCIDRs[0]:FieldValueInvalid"}},
		"taint effect": {func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: "Never"}} }, []string{"metadata.taints[0].effect:FieldValueNotSupported"}},
		"dup taint": {func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: "NoSchedule"}, {Key: "k", Value: "v", Effect: "NoSchedule"}}
		}, []string{"metadata.taints[1]:FieldValueDuplicate"}},
		"negative capacity": {func(n *corev1.Node) {
			n.Status.Capacity = corev1.ResourceList{"memory": resource.MustParse("-1Gi")}
		}, []string{"status.allocatable.memory:FieldValueInvalid", "status.capacity.memory:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
			c.mutate(n)
			expectErrors(t, create(r, n), c.want...)
		})
	}
}

func TestNodeUpdates(t *testing.T) {
	r := lookup(t, "nodes")
	old := storedNode(t)

	n := old.DeepCopy()
	n.Spec.Unschedulable = true
	n.Status.Conditions = nil
	expectValid(t, update(r, n, old))
	if len(n.Status.Conditions) != 1 {
		t.Error("main update changed status")
	}

	n = old.DeepCopy()
	n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.2.0/24", nil
	expectErrors(t, update(r, n, old), "spec.podCIDRs:FieldValueForbidden")

	n = old.DeepCopy()
	n.Spec.Unschedulable = true
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	expectValid(t, updateStatus(r, n, old))
	if n.Spec.Unschedulable || n.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("status update: unschedulable %v conditions %v", n.Spec.Unschedulable, n.Status.Conditions)
	}
}

// TestNodeMessages: the messages kube-apiserver words its own way.
func TestNodeMessages(t *testing.T) {
	r := lookup(t, "nodes")
	n := storedNode(t)
	n.Spec.PodCIDR, n.Spec.PodCIDRs = "", []string{"not-a-cidr"}
	n.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	errs := create(r, n)
	if errs.ToAggregate().Error() != `[spec.podCIDRs[0]: Invalid value: "not-a-cidr": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), `+
		`metadata.taints[1]: Duplicate value: {"Key":"a","Value":"x","Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect pair]` {
		t.Errorf("create: %v", errs)
	}
	old := storedNode(t)
	old.Spec.ProviderID = "provider:///node-1"
	for id, want := range map[string]string{
		"provider:///node-2": `spec.providerID: Invalid value: null: field cannot be modified once set`,
		"":                   `spec.providerID: Invalid value: null: field cannot be cleared once set`,
	} {
		n := old.DeepCopy()
		n.Spec.ProviderID = id
		if errs := update(r, n, old); errs.ToAggregate() == nil || errs.ToAggregate().Error() != want {
			t.Errorf("providerID %q: %v", id, errs)
		}
	}
}
