package endpointutil

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFindPort(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Ports: []corev1.ContainerPort{{Name: "once", ContainerPort: 1}}},
			{Name: "side", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001}}},
		},
		Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{
			{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP},
			{Name: "http", ContainerPort: 8080},
		}}},
	}}
	for _, tc := range []struct {
		sp   corev1.ServicePort
		want int32
		ok   bool
	}{
		{corev1.ServicePort{Port: 80, TargetPort: intstr.FromInt32(9000)}, 9000, true},
		{corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http")}, 8080, true},
		{corev1.ServicePort{Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolUDP}, 0, false},
		{corev1.ServicePort{Port: 53, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP}, 5353, true},
		{corev1.ServicePort{Port: 53, TargetPort: intstr.FromString("dns")}, 0, false},
		{corev1.ServicePort{Port: 1, TargetPort: intstr.FromString("proxy")}, 15001, true},
		{corev1.ServicePort{Port: 1, TargetPort: intstr.FromString("once")}, 0, false},
	} {
		got, err := FindPort(pod, &tc.sp)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%+v: got %d, %v; want %d ok=%v", tc.sp, got, err, tc.want, tc.ok)
		}
	}
}

func TestServiceFamilyAndPodIP(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}}}
	for _, tc := range []struct {
		svc  corev1.ServiceSpec
		want string
	}{
		{corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}}, "fd00::1"},
		{corev1.ServiceSpec{ClusterIP: "10.96.0.10"}, "10.0.0.1"},
		{corev1.ServiceSpec{ClusterIP: "fd00:96::a"}, "fd00::1"},
		{corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}, "10.0.0.1"},
	} {
		svc := &corev1.Service{Spec: tc.svc}
		if got := PodIPOfFamily(pod, ServiceFamily(svc, pod)); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.svc, got, tc.want)
		}
	}
}

func TestTriggerTimes(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n", CreationTimestamp: metav1.NewTime(t0)}}
	pod := func(name string, ready bool, at time.Time) *corev1.Pod {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)},
			Status: corev1.PodStatus{PodIP: "10.0.0.1", Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(at)}}}}
	}
	tt := NewTriggerTimes()
	compute := func(pods ...*corev1.Pod) time.Time {
		at, seen := tt.Compute(svc, pods)
		tt.Commit(seen)
		return at
	}
	if got := compute(pod("a", true, t0.Add(time.Second))); !got.Equal(t0) {
		t.Fatalf("first sync: %v, want the service's creation", got)
	}
	if got := compute(pod("a", true, t0.Add(time.Second))); !got.IsZero() {
		t.Fatalf("nothing changed: %v", got)
	}
	// A sync whose write failed commits nothing: its retry sees the same
	// changes.
	changed := []*corev1.Pod{pod("a", false, t0.Add(5*time.Second)), pod("b", true, t0.Add(3*time.Second))}
	if got, _ := tt.Compute(svc, changed); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("two changes: %v, want the earliest", got)
	}
	if got := compute(changed...); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("retry after an uncommitted sync: %v, want the same changes again", got)
	}
	if got := compute(changed...); !got.IsZero() {
		t.Fatalf("after commit: %v, want nothing new", got)
	}
	tt.Forget("n", "s")
	if got := compute(); !got.Equal(t0) {
		t.Fatalf("after Forget: %v", got)
	}
}
