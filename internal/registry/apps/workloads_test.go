package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func newStatefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", ResourceVersion: "2"},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: newTemplate(),
		},
	}
}

// TestStatefulSetScaleAndStatus: the scale subresource reads and writes
// spec.replicas; a status write keeps the spec and the labels it sends.
func TestStatefulSetScaleAndStatus(t *testing.T) {
	r := lookup(t, "statefulsets")
	s := newStatefulSet()
	expectValid(t, create(r, s))
	if *s.Spec.Replicas != 1 || *s.Spec.UpdateStrategy.RollingUpdate.Partition != 0 || s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable.IntValue() != 1 {
		t.Fatalf("defaults: %+v", s.Spec)
	}
	s.Status.Replicas = 2
	if err := r.Scale.SetReplicas(s, 5); err != nil {
		t.Fatal(err)
	}
	spec, status, sel, err := r.Scale.Replicas(s)
	if err != nil || spec != 5 || status != 2 || sel != "app=web" {
		t.Errorf("scale = %d %d %q %v", spec, status, sel, err)
	}
	st := s.DeepCopy()
	st.Spec.Replicas = new(int32(9))
	st.Labels = map[string]string{"by": "status"}
	st.Status = appsv1.StatefulSetStatus{Replicas: 5, ReadyReplicas: 5, AvailableReplicas: 5, CurrentReplicas: 5, UpdatedReplicas: 5}
	expectValid(t, updateStatus(r, st, s))
	if *st.Spec.Replicas != 5 || st.Labels["by"] != "status" {
		t.Errorf("status update: replicas %d labels %v", *st.Spec.Replicas, st.Labels)
	}
	expectFields(t, r, s, fields.Set{"metadata.name": "db", "metadata.namespace": "default"})
}

// TestDaemonSetTemplateGeneration: apps/v1 keeps the template generation
// in an annotation, 1 on create, +1 per template change, kept from the
// old object by status writes.
func TestDaemonSetTemplateGeneration(t *testing.T) {
	r := lookup(t, "daemonsets")
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", ResourceVersion: "2"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: newTemplate()},
	}
	expectValid(t, create(r, ds))
	gen := func(d *appsv1.DaemonSet) string { return d.Annotations[appsv1.DeprecatedTemplateGeneration] }
	if gen(ds) != "1" {
		t.Fatalf("template generation on create: %q", gen(ds))
	}
	same := ds.DeepCopy()
	same.Spec.MinReadySeconds = 3
	expectValid(t, update(r, same, ds))
	changed := ds.DeepCopy()
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	expectValid(t, update(r, changed, ds))
	if gen(same) != "1" || gen(changed) != "2" {
		t.Errorf("template generation: unchanged template %q, changed %q", gen(same), gen(changed))
	}
	st := changed.DeepCopy()
	st.Annotations[appsv1.DeprecatedTemplateGeneration] = "9"
	st.Status.NumberReady = 1
	expectValid(t, updateStatus(r, st, changed))
	if gen(st) != "2" {
		t.Errorf("a status write moved the template generation to %q", gen(st))
	}
}
