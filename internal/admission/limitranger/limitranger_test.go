package limitranger_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden, got %v", err)
	}
	if got := err.(apierrors.APIStatus).Status().Message; got != msg {
		t.Fatalf("message\n got %q\nwant %q", got, msg)
	}
}

// TestLimitRangerOnARealServer: defaults and refusals of pods and claims,
// worded as kube-apiserver's LimitRanger, refusals leaving the store
// unchanged.
func TestLimitRangerOnARealServer(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	c := s.RESTClient(t)
	ctx := context.Background()
	lrs := rest.For[*corev1.LimitRange, *corev1.LimitRangeList](c, corev1.SchemeGroupVersion.WithResource("limitranges"), true).Namespace("default")
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default")
	pvcs := rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace("default")

	_, err := lrs.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m", "memory", "256Mi"), DefaultRequest: rl("cpu", "100m"),
			Max: rl("cpu", "1"), Min: rl("memory", "64Mi"), MaxLimitRequestRatio: rl("cpu", "5")},
		{Type: corev1.LimitTypePod, Max: rl("memory", "1Gi")},
		{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")},
	}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// defaults: both containers get the missing limits and requests
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Image: "busybox"},
		{Name: "side", Image: "busybox", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "200m")}},
	}}}
	got, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app, side := got.Spec.Containers[0].Resources, got.Spec.Containers[1].Resources
	if app.Limits.Cpu().String() != "500m" || app.Limits.Memory().String() != "256Mi" || app.Requests.Cpu().String() != "100m" || app.Requests.Memory().String() != "256Mi" {
		t.Fatalf("app resources %+v", app)
	}
	if side.Limits.Cpu().String() != "200m" || side.Requests.Cpu().String() != "200m" || side.Limits.Memory().String() != "256Mi" {
		t.Fatalf("side resources %+v", side)
	}
	const ann = "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; memory request for container side; memory limit for container side"
	if a := got.Annotations["kubernetes.io/limit-ranger"]; a != ann {
		t.Fatalf("annotation\n got %q\nwant %q", a, ann)
	}

	refused := []struct {
		name string
		res  corev1.ResourceRequirements
		msg  string
	}{
		{"too-much-cpu", corev1.ResourceRequirements{Limits: rl("cpu", "2"), Requests: rl("cpu", "1")},
			`pods "too-much-cpu" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"too-little-memory", corev1.ResourceRequirements{Requests: rl("memory", "32Mi")},
			`pods "too-little-memory" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi`},
		{"ratio", corev1.ResourceRequirements{Limits: rl("cpu", "1"), Requests: rl("cpu", "100m")},
			`pods "ratio" is forbidden: cpu max limit to request ratio per Container is 5, but provided ratio is 10.000000`},
		{"pod-memory", corev1.ResourceRequirements{Limits: rl("memory", "2Gi")},
			`pods "pod-memory" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2Gi`},
	}
	for _, tc := range refused {
		_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: tc.res}}}}, metav1.CreateOptions{})
		wantForbidden(t, err, tc.msg)
		if _, err := pods.Get(ctx, tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: refused pod stored: %v", tc.name, err)
		}
	}

	claim := func(name, size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: rl("storage", size)}}}
	}
	_, err = pvcs.Create(ctx, claim("big", "20Gi"), metav1.CreateOptions{})
	wantForbidden(t, err, `persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`)
	_, err = pvcs.Create(ctx, claim("small", "500Mi"), metav1.CreateOptions{})
	wantForbidden(t, err, `persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`)
	if l, err := pvcs.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("refused claims stored: %v %v", l, err)
	}
	if _, err := pvcs.Create(ctx, claim("ok", "5Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
