package fieldmanager_test

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// write is one update of a sequence: who, through which endpoint, and how
// the object changes.
type write struct {
	manager, subresource string
	change               func(runtime.Object)
	reduced              bool // Update tracks reduced copies
}

// checkSequence runs the writes from obj (created by creator) through
// Update and through the unreduced tracking, and requires the same
// managedFields after each (times aside: both are now, to the second).
func checkSequence(t *testing.T, name, creator string, obj runtime.Object, writes []write) {
	t.Helper()
	r := resource(t, name)
	live := r.Update(nil, obj.DeepCopyObject(), creator, "")
	live.(metav1.Object).SetUID(types.UID("uid-1"))
	for i, w := range writes {
		next := live.DeepCopyObject()
		w.change(next)
		if got := r.Reduced(live, next); got != w.reduced {
			t.Errorf("write %d (%s): reduced %v, want %v", i, w.manager, got, w.reduced)
		}
		got := r.Update(live.DeepCopyObject(), next.DeepCopyObject(), w.manager, w.subresource)
		want := r.UpdateUnreduced(live.DeepCopyObject(), next.DeepCopyObject(), w.manager, w.subresource)
		g, wnt := withoutTimes(got), withoutTimes(want)
		if !reflect.DeepEqual(g, wnt) {
			t.Fatalf("write %d (%s via %q): managedFields\n got %s\nwant %s", i, w.manager, w.subresource, dump(g), dump(wnt))
		}
		if !reflect.DeepEqual(stripManaged(got), stripManaged(want)) {
			t.Fatalf("write %d (%s): the object changed besides managedFields", i, w.manager)
		}
		live = got
	}
}

func withoutTimes(obj runtime.Object) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range obj.(metav1.Object).GetManagedFields() {
		e.Time = nil
		out = append(out, e)
	}
	return out
}

func stripManaged(obj runtime.Object) runtime.Object {
	c := obj.DeepCopyObject()
	c.(metav1.Object).SetManagedFields(nil)
	return c
}

func dump(es []metav1.ManagedFieldsEntry) string {
	s := ""
	for _, e := range es {
		s += "\n  " + e.Manager + " " + string(e.Operation) + " " + e.APIVersion + " " + e.Subresource + " " + string(e.FieldsV1.Raw)
	}
	return s
}

func pod(obj runtime.Object) *corev1.Pod { return obj.(*corev1.Pod) }

// TestReducedTrackingMatchesWholeObjects: pod and Deployment writes of
// several managers through the main resource and status — status-only,
// metadata-only, spec changes, no-ops, one manager taking another's
// fields — give the same managedFields with and without dropping the
// top-level fields the live and new object share.
func TestReducedTrackingMatchesWholeObjects(t *testing.T) {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1",
			Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}}}},
	}
	checkSequence(t, "pods", "kube-controller-manager", p, []write{
		{manager: "kube-scheduler", subresource: "status", reduced: true, change: func(o runtime.Object) {
			pod(o).Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		}},
		{manager: "kubelet", subresource: "status", reduced: true, change: func(o runtime.Object) {
			pod(o).Status.Phase = corev1.PodRunning
			pod(o).Status.Conditions = append(pod(o).Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			pod(o).Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, Image: "nginx:1"}}
		}},
		{manager: "kubelet", subresource: "status", reduced: true, change: func(runtime.Object) {}},
		{manager: "kubectl-label", reduced: true, change: func(o runtime.Object) { pod(o).Labels["tier"] = "front" }},
		{manager: "kubectl-edit", reduced: true, change: func(o runtime.Object) { pod(o).Spec.Containers[0].Image = "nginx:2" }},
		{manager: "other", subresource: "status", reduced: true, change: func(o runtime.Object) {
			pod(o).Status.Conditions[1].Status = corev1.ConditionFalse
			pod(o).Status.Phase = ""
		}},
		{manager: "kubectl-label", reduced: true, change: func(o runtime.Object) { delete(pod(o).Labels, "tier") }},
	})

	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}}}},
	}
	dep := func(o runtime.Object) *appsv1.Deployment { return o.(*appsv1.Deployment) }
	checkSequence(t, "deployments", "kubectl-create", d, []write{
		{manager: "kube-controller-manager", subresource: "status", reduced: true, change: func(o runtime.Object) {
			dep(o).Status.Replicas, dep(o).Status.ObservedGeneration = 2, 1
		}},
		{manager: "kubectl-scale", reduced: true, change: func(o runtime.Object) { dep(o).Spec.Replicas = ptr.To[int32](5) }},
		{manager: "kube-controller-manager", subresource: "status", reduced: true, change: func(o runtime.Object) {
			dep(o).Status.Replicas, dep(o).Status.ReadyReplicas = 5, 5
		}},
		// spec and status both change: nothing to drop.
		{manager: "both", reduced: false, change: func(o runtime.Object) {
			dep(o).Spec.Paused = true
			dep(o).Status.ReadyReplicas = 4
		}},
	})
}

// TestNoReductionAcrossVersions: an entry of another apiVersion is
// compared after a conversion, which may read the dropped fields, so the
// whole objects are tracked.
func TestNoReductionAcrossVersions(t *testing.T) {
	r := resource(t, "pods")
	live := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "old", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1beta1"}}},
		Spec: corev1.PodSpec{NodeName: "n"}}
	next := live.DeepCopy()
	next.Status.Phase = corev1.PodRunning
	if r.Reduced(live, next) {
		t.Error("reduced with a v1beta1 entry")
	}
	live.ManagedFields[0].APIVersion = "v1"
	next.ManagedFields[0].APIVersion = "v1"
	if !r.Reduced(live, next) {
		t.Error("not reduced with v1 entries only")
	}
}
