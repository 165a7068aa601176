package priority_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/admissiontest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	podsPath    = "/api/v1/namespaces/default/pods"
	classesPath = "/apis/scheduling.k8s.io/v1/priorityclasses"
)

func pod(name string, f func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	f(&p.Spec)
	return p
}

func class(name string, value int32, def bool) *schedulingv1.PriorityClass {
	never := corev1.PreemptNever
	return &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: &never}
}

func forbidden(name, msg string) admissiontest.Refusal {
	return admissiontest.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Name: name, Kind: "pods",
		Message: `pods "` + name + `" is forbidden: ` + msg}
}

// TestPriority checks the pods' priority from their class or the global
// default, the refusals (missing class, a priority or preemption policy
// differing from the class's, a second global default), each leaving the
// store unchanged.
func TestPriority(t *testing.T) {
	s := admissiontest.Start(t, testserver.Options{})
	var got corev1.Pod
	s.MustDo(http.MethodPost, podsPath, pod("none", func(*corev1.PodSpec) {}), &got)
	if *got.Spec.Priority != 0 || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority || got.Spec.PriorityClassName != "" {
		t.Errorf("no class: priority %d policy %s class %q", *got.Spec.Priority, *got.Spec.PreemptionPolicy, got.Spec.PriorityClassName)
	}
	s.MustDo(http.MethodPost, classesPath, class("high", 1000, false), nil)
	s.MustDo(http.MethodPost, classesPath, class("low", 10, true), nil)
	s.MustDo(http.MethodPost, podsPath, pod("high", func(p *corev1.PodSpec) { p.PriorityClassName = "high" }), &got)
	if *got.Spec.Priority != 1000 || *got.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("class high: priority %d policy %s", *got.Spec.Priority, *got.Spec.PreemptionPolicy)
	}
	s.MustDo(http.MethodPost, podsPath, pod("default", func(*corev1.PodSpec) {}), &got)
	if *got.Spec.Priority != 10 || got.Spec.PriorityClassName != "low" {
		t.Errorf("global default: priority %d class %q", *got.Spec.Priority, got.Spec.PriorityClassName)
	}
	missing := pod("", func(p *corev1.PodSpec) { p.PriorityClassName = "nope" })
	missing.GenerateName = "g-"
	s.WantRefused(http.MethodPost, podsPath, missing, podsPath, forbidden("g-", "no PriorityClass with name nope was found"))
	five := int32(5)
	s.WantRefused(http.MethodPost, podsPath, pod("p5", func(p *corev1.PodSpec) { p.PriorityClassName, p.Priority = "high", &five }), podsPath,
		forbidden("p5", "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"))
	lower := corev1.PreemptLowerPriority
	s.WantRefused(http.MethodPost, podsPath, pod("pp", func(p *corev1.PodSpec) { p.PriorityClassName, p.PreemptionPolicy = "high", &lower }), podsPath,
		forbidden("pp", "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"))
	s.WantRefused(http.MethodPost, classesPath, class("other", 20, true), classesPath, admissiontest.Refusal{
		Code: 403, Reason: metav1.StatusReasonForbidden, Name: "other", Kind: "priorityclasses",
		Message: `priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist`})
}
