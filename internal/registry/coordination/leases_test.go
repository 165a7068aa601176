package coordination

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestLease(t *testing.T) {
	r := lookup(t, "leases")
	newLease := func() *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system", ResourceVersion: "5"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: new("sched-1"), LeaseDurationSeconds: new(int32(15))},
		}
	}
	expectValid(t, create(r, newLease()))
	for name, c := range map[string]struct {
		mutate func(*coordinationv1.Lease)
		want   []string
	}{
		"zero duration":        {func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = new(int32(0)) }, []string{"spec.leaseDurationSeconds:FieldValueInvalid"}},
		"negative transitions": {func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = new(int32(-1)) }, []string{"spec.leaseTransitions:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			l := newLease()
			c.mutate(l)
			expectErrors(t, create(r, l), c.want...)
		})
	}
	old := newLease()
	l := old.DeepCopy()
	l.Spec.HolderIdentity = new("sched-2")
	expectValid(t, update(r, l, old))

	// As kube-apiserver with CoordinatedLeaderElection off: a new lease
	// loses strategy and preferredHolder; an update keeps those old had
	// (and then validates them).
	l = newLease()
	l.Spec.Strategy, l.Spec.PreferredHolder = new(coordinationv1.OldestEmulationVersion), new("x")
	expectValid(t, create(r, l))
	if l.Spec.Strategy != nil || l.Spec.PreferredHolder != nil {
		t.Errorf("created with strategy %v, preferredHolder %v", l.Spec.Strategy, l.Spec.PreferredHolder)
	}
	old = newLease()
	old.Spec.PreferredHolder = new("x")
	l = old.DeepCopy()
	expectErrors(t, update(r, l, old), "spec.preferredHolder:FieldValueForbidden")
	expectFields(t, r, old, fields.Set{"metadata.name": "kube-scheduler", "metadata.namespace": "kube-system"})
}
