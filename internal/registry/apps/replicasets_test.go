package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func newReplicaSet() *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", ResourceVersion: "2"},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}},
			Template: newTemplate(),
		},
	}
}

func TestReplicaSet(t *testing.T) {
	r := lookup(t, "replicasets")
	rs := newReplicaSet()
	rs.Status.Replicas = 3
	expectValid(t, create(r, rs))
	if *rs.Spec.Replicas != 1 || rs.Status.Replicas != 0 || rs.Spec.Template.Spec.DNSPolicy != "ClusterFirst" {
		t.Errorf("defaults: replicas %d status %d dns %q", *rs.Spec.Replicas, rs.Status.Replicas, rs.Spec.Template.Spec.DNSPolicy)
	}

	cases := map[string]struct {
		mutate func(*appsv1.ReplicaSet)
		want   []string
	}{
		"negative replicas": {func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = new(int32(-2)) }, []string{"spec.replicas:FieldValueInvalid"}},
		"no selector":       {func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil }, []string{"spec.selector:FieldValueRequired", "spec.template.metadata.labels:FieldValueInvalid"}},
		"mismatch":          {func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Labels = nil }, []string{"spec.template.metadata.labels:FieldValueInvalid"}},
		"bad operator": {func(rs *appsv1.ReplicaSet) { rs.Spec.Selector.MatchExpressions[0].Operator = "Like" },
			[]string{"spec.selector.matchExpressions[0].operator:FieldValueInvalid", "spec.selector:FieldValueInvalid"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rs := newReplicaSet()
			c.mutate(rs)
			expectErrors(t, create(r, rs), c.want...)
		})
	}

	old := rs.DeepCopy()
	old.Status = appsv1.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1}
	upd := old.DeepCopy()
	upd.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	expectErrors(t, update(r, upd, old), "spec.selector:FieldValueInvalid")

	st := old.DeepCopy()
	st.Spec.Replicas = new(int32(9))
	st.Status = appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2}
	expectErrors(t, updateStatus(r, st, old), "status.fullyLabeledReplicas:FieldValueInvalid")
	if *st.Spec.Replicas != 1 {
		t.Errorf("status update changed spec.replicas to %d", *st.Spec.Replicas)
	}

	expectFields(t, r, st, fields.Set{"metadata.name": "web-1", "metadata.namespace": "default"})
	spec, status, sel, err := r.Scale.Replicas(st)
	if err != nil || spec != 1 || status != 2 || sel != "app in (web)" {
		t.Errorf("scale = %d %d %q %v", spec, status, sel, err)
	}
}
