package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newLimitRange(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default", ResourceVersion: "2"},
		Spec:       corev1.LimitRangeSpec{Limits: items},
	}
}

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestLimitRangeDefaults(t *testing.T) {
	r := lookup(t, "limitranges")
	lr := newLimitRange(
		corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("cpu", "2", "memory", "1Gi"), Min: list("cpu", "10m", "ephemeral-storage", "1Mi"),
			Default: list("memory", "512Mi")},
		corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "0.0001")},
	)
	expectValid(t, create(r, lr))
	c := lr.Spec.Limits[0]
	// default from max where unset; default request from default, else min.
	for _, x := range []struct {
		what string
		l    corev1.ResourceList
		name corev1.ResourceName
		want string
	}{
		{"default cpu", c.Default, "cpu", "2"}, {"default memory", c.Default, "memory", "512Mi"},
		{"request cpu", c.DefaultRequest, "cpu", "2"}, {"request memory", c.DefaultRequest, "memory", "512Mi"},
		{"request storage", c.DefaultRequest, "ephemeral-storage", "1Mi"},
		{"rounded", lr.Spec.Limits[1].Max, "cpu", "1m"},
	} {
		if q := x.l[x.name]; q.String() != x.want {
			t.Errorf("%s = %s, want %s", x.what, q.String(), x.want)
		}
	}
	if lr.Spec.Limits[1].Default != nil {
		t.Errorf("Pod item got defaults: %v", lr.Spec.Limits[1].Default)
	}
	if n := r.Strategy.(registry.NameDefaulter).DefaultName(); len(n) != 36 {
		t.Errorf("default name %q, want a UUID", n)
	}
}

func TestLimitRangeValidation(t *testing.T) {
	r := lookup(t, "limitranges")
	container := corev1.LimitTypeContainer
	for name, c := range map[string]struct {
		items []corev1.LimitRangeItem
		want  []string
	}{
		"min over max":        {[]corev1.LimitRangeItem{{Type: container, Min: list("cpu", "2"), Max: list("cpu", "1")}}, []string{"spec.limits[0].min[cpu]:FieldValueInvalid", "spec.limits[0].default[cpu]:FieldValueInvalid", "spec.limits[0].defaultRequest[cpu]:FieldValueInvalid"}},
		"request over limit":  {[]corev1.LimitRangeItem{{Type: container, Default: list("cpu", "1"), DefaultRequest: list("cpu", "2")}}, []string{"spec.limits[0].defaultRequest[cpu]:FieldValueInvalid"}},
		"pod defaults":        {[]corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Default: list("cpu", "1")}}, []string{"spec.limits[0].default:FieldValueForbidden"}},
		"duplicate type":      {[]corev1.LimitRangeItem{{Type: container}, {Type: container}}, []string{"spec.limits[1].type:FieldValueDuplicate"}},
		"unknown type":        {[]corev1.LimitRangeItem{{Type: "Widget"}}, []string{"spec.limits[0].type:FieldValueInvalid"}},
		"claim without bound": {[]corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim}}, []string{"spec.limits[0].limits:FieldValueRequired"}},
		"container resource":  {[]corev1.LimitRangeItem{{Type: container, Max: list("pods", "1")}}, []string{"spec.limits[0].max[pods]:FieldValueInvalid", "spec.limits[0].default[pods]:FieldValueInvalid", "spec.limits[0].defaultRequest[pods]:FieldValueInvalid"}},
		"ratio below one":     {[]corev1.LimitRangeItem{{Type: corev1.LimitTypePod, MaxLimitRequestRatio: list("cpu", "500m")}}, []string{"spec.limits[0].maxLimitRequestRatio[cpu]:FieldValueInvalid"}},
		"ratio above max/min": {[]corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Min: list("cpu", "100m"), Max: list("cpu", "200m"), MaxLimitRequestRatio: list("cpu", "3")}}, []string{"spec.limits[0].maxLimitRequestRatio[cpu]:FieldValueInvalid"}},
		"hugepages unequal":   {[]corev1.LimitRangeItem{{Type: container, Default: list("hugepages-2Mi", "2Mi"), DefaultRequest: list("hugepages-2Mi", "4Mi")}}, []string{"spec.limits[0].defaultRequest[hugepages-2Mi]:FieldValueInvalid", "spec.limits[0].defaultRequest[hugepages-2Mi]:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) {
			expectErrors(t, create(r, newLimitRange(c.items...)), c.want...)
		})
	}
	old := newLimitRange(corev1.LimitRangeItem{Type: container, Max: list("cpu", "1")})
	expectValid(t, create(r, old))
	upd := old.DeepCopy()
	upd.Spec.Limits[0].Min = list("cpu", "2")
	expectErrors(t, update(r, upd, old), "spec.limits[0].min[cpu]:FieldValueInvalid", "spec.limits[0].defaultRequest[cpu]:FieldValueInvalid", "spec.limits[0].default[cpu]:FieldValueInvalid")
	// As kube-apiserver: the metadata an update may not change.
	upd = old.DeepCopy()
	upd.UID = "6b5c8f27-0000-4000-8000-000000000000"
	expectErrors(t, update(r, upd, old), "metadata.uid:FieldValueInvalid")
}
