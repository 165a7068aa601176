package defaulttolerationseconds_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/admissiontest"
	"github.com/setpoint-dev/setpoint/internal/admission/defaulttolerationseconds"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const podsPath = "/api/v1/namespaces/default/pods"

// TestDefaultTolerationSeconds checks, over HTTP, which pods get the
// not-ready and unreachable tolerations of 300s, and the flags' values.
func TestDefaultTolerationSeconds(t *testing.T) {
	s := admissiontest.Start(t, testserver.Options{})
	create := func(name string, tols ...corev1.Toleration) string {
		t.Helper()
		var got corev1.Pod
		s.MustDo(http.MethodPost, podsPath, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}, Tolerations: tols}}, &got)
		raw, _ := json.Marshal(got.Spec.Tolerations)
		return string(raw)
	}
	const notReady = `{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}`
	const unreachable = `{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}`
	for _, tc := range []struct {
		name string
		tols []corev1.Toleration
		want string
	}{
		{"none", nil, "[" + notReady + "," + unreachable + "]"},
		{"own-not-ready", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			`[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"},` + unreachable + "]"},
		{"any-effect", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}},
			`[{"key":"node.kubernetes.io/unreachable","operator":"Exists"},` + notReady + "]"},
		{"no-schedule-only", []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			`[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoSchedule"},` + notReady + "," + unreachable + "]"},
		{"everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, `[{"operator":"Exists"}]`},
	} {
		if got := create(tc.name, tc.tols...); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// An update keeps them (a client sending its old spec back).
	var p corev1.Pod
	s.MustDo(http.MethodGet, podsPath+"/none", nil, &p)
	p.Labels = map[string]string{"x": "y"}
	s.MustDo(http.MethodPut, podsPath+"/none", &p, &p)
	if len(p.Spec.Tolerations) != 2 {
		t.Errorf("after update: %+v", p.Spec.Tolerations)
	}
}

// TestTolerationSecondsFlags: the plugin built for
// --default-not-ready-toleration-seconds=60 and
// --default-unreachable-toleration-seconds=120 adds those; it ignores
// subresources and other resources.
func TestTolerationSecondsFlags(t *testing.T) {
	pl := defaulttolerationseconds.New(60, 120)
	pods := &registry.Resource{Version: "v1", Resource: "pods", Namespaced: true}
	p := &corev1.Pod{}
	if _, err := pl.Admit(context.Background(), nil, &registry.Attributes{Operation: registry.Create, Resource: pods, Object: p}); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Tolerations) != 2 || *p.Spec.Tolerations[0].TolerationSeconds != 60 || *p.Spec.Tolerations[1].TolerationSeconds != 120 {
		t.Errorf("tolerations %+v", p.Spec.Tolerations)
	}
	other := &corev1.Pod{}
	for _, a := range []*registry.Attributes{
		{Operation: registry.Update, Resource: pods, Subresource: "status", Object: other},
		{Operation: registry.Create, Resource: &registry.Resource{Version: "v1", Resource: "podtemplates"}, Object: other},
		{Operation: registry.Delete, Resource: pods, Object: other},
	} {
		if _, err := pl.Admit(context.Background(), nil, a); err != nil || len(other.Spec.Tolerations) != 0 {
			t.Errorf("%s %s/%s: %v %+v", a.Operation, a.Resource.Resource, a.Subresource, err, other.Spec.Tolerations)
		}
	}
}
