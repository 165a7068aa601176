package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPriorityClass(t *testing.T) {
	r := lookup(t, "priorityclasses")
	for _, obj := range r.Bootstrap() {
		pc := obj.(*schedulingv1.PriorityClass).DeepCopy()
		expectValid(t, create(r, pc)) // the system classes pass their own rules
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high", ResourceVersion: "3"}, Value: HighestUserDefinablePriority}
	expectValid(t, create(r, pc))
	if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("preemptionPolicy = %v", pc.PreemptionPolicy)
	}
	pc.Value++
	expectErrors(t, create(r, pc.DeepCopy()), "value:FieldValueForbidden")
	sys := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: SystemCriticalPriority, GlobalDefault: true}
	expectErrors(t, create(r, sys), "metadata.name:FieldValueForbidden")
}
