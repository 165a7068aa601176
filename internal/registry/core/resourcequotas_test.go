package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: "default", ResourceVersion: "5"},
		Spec:       corev1.ResourceQuotaSpec{Hard: list("pods", "10", "requests.cpu", "0.0001")},
		Status:     corev1.ResourceQuotaStatus{Hard: list("pods", "1")},
	}
}

func TestResourceQuota(t *testing.T) {
	r := lookup(t, "resourcequotas")
	q := newQuota()
	expectValid(t, create(r, q))
	if c := q.Spec.Hard["requests.cpu"]; c.String() != "1m" || len(q.Status.Hard) != 0 {
		t.Errorf("after create: requests.cpu %s, status %+v", c.String(), q.Status)
	}
	for name, c := range map[string]struct {
		mutate func(*corev1.ResourceQuota)
		want   []string
	}{
		"fraction of a count": {func(q *corev1.ResourceQuota) { q.Spec.Hard = list("pods", "1.5") }, []string{"spec.hard[pods]:FieldValueInvalid"}},
		"extended fraction":   {func(q *corev1.ResourceQuota) { q.Spec.Hard = list("example.com/gpu", "0.5") }, []string{"spec.hard[example.com/gpu]:FieldValueInvalid"}},
		"negative":            {func(q *corev1.ResourceQuota) { q.Spec.Hard = list("cpu", "-1") }, []string{"spec.hard[cpu]:FieldValueInvalid"}},
		"not for quota":       {func(q *corev1.ResourceQuota) { q.Spec.Hard = list("storage", "1Gi") }, []string{"spec.hard[storage]:FieldValueInvalid"}},
		"unknown":             {func(q *corev1.ResourceQuota) { q.Spec.Hard = list("foo", "1") }, []string{"spec.hard[foo]:FieldValueInvalid", "spec.hard[foo]:FieldValueInvalid"}},
		"scope for resource": {func(q *corev1.ResourceQuota) {
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
		},
			[]string{"spec.scopes:FieldValueInvalid"}},
		"conflicting scopes": {func(q *corev1.ResourceQuota) {
			q.Spec.Hard = list("pods", "1")
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}
		}, []string{"spec.scopes:FieldValueInvalid"}},
		"selector operator": {func(q *corev1.ResourceQuota) {
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn}}}
		}, []string{"spec.scopeSelector.matchExpressions.values:FieldValueRequired"}},
		"status": {func(q *corev1.ResourceQuota) { q.Status.Used = list("pods", "-1") }, []string{"status.used[pods]:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			q := newQuota()
			c.mutate(q)
			r.Strategy.Default(q)
			expectErrors(t, r.Strategy.Validate(q), c.want...)
		})
	}

	upd := q.DeepCopy()
	upd.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}
	upd.Status.Used = list("pods", "2")
	expectErrors(t, update(r, upd, q), "spec.scopes:FieldValueInvalid")
	if len(upd.Status.Used) != 0 {
		t.Error("an update of the main resource wrote status")
	}

	st := q.DeepCopy()
	st.Spec.Hard = list("pods", "1")
	st.Status = corev1.ResourceQuotaStatus{Hard: list("pods", "10"), Used: list("pods", "2")}
	st.Labels = map[string]string{"written": "yes"}
	expectValid(t, updateStatus(r, st, q))
	if p := st.Spec.Hard["pods"]; p.String() != "10" || st.Labels["written"] != "yes" {
		t.Errorf("status update: spec %v labels %v (as kube-apiserver: spec kept, labels written)", st.Spec.Hard, st.Labels)
	}
	st.Status.Used = list("pods", "0.5")
	expectErrors(t, updateStatus(r, st, q), "status.used[pods]:FieldValueInvalid")

	warn := newQuota()
	warn.Spec.Hard = list("cpu", "2", "limits.cpu", "1")
	got := r.Strategy.(registry.WarningsStrategy).WarningsOnCreate(warn)
	if len(got) != 1 || got[0] != "ResourceQuota cpu (2) should be less than limits.cpu (1)" {
		t.Errorf("warnings %q", got)
	}
}
