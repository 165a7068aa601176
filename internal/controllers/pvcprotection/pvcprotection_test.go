package pvcprotection_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/pvcprotection"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// A deleted claim stays while a pod that has not terminated uses it
// (through a persistentVolumeClaim volume or as a generic ephemeral
// volume's claim); a Succeeded pod does not hold it; once the last user is
// gone the finalizer goes and the claim with it.
func TestClaimHeldWhileUsed(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	if err := pvcprotection.Add(mgr, pvcprotection.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	c := mgr.Client()
	pvcs := rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace(ns)
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace(ns)

	claim := func(name string) {
		t.Helper()
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: new(""),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		if _, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string, vol corev1.VolumeSource) *corev1.Pod {
		t.Helper()
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes:    []corev1.Volume{{Name: "scratch", VolumeSource: vol}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	uses := func(claim string) corev1.VolumeSource {
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
	}
	gone := func(name string) bool { _, err := pvcs.Get(ctx, name, metav1.GetOptions{}); return err != nil }
	wait := func(what string, cond func() bool) {
		t.Helper()
		testwait.UntilEvery(t, 15*time.Second, 20*time.Millisecond, what, testwait.Bool(cond))
	}
	held := func(name string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		cur, err := pvcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil || cur.DeletionTimestamp == nil || !slices.Contains(cur.Finalizers, "kubernetes.io/pvc-protection") {
			t.Fatalf("claim %s not held: %v %+v", name, err, cur)
		}
	}

	claim("data")
	claim("eph-scratch")
	claim("free")
	pod("app", uses("data"))
	done1 := pod("batch", uses("data"))
	done1.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, done1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod("eph", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}})
	for _, n := range []string{"data", "eph-scratch", "free"} {
		if err := pvcs.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait("unused claim removed", func() bool { return gone("free") })
	held("data")
	held("eph-scratch")
	for _, p := range []string{"app", "eph"} {
		if err := pods.Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	wait("claims released", func() bool { return gone("data") && gone("eph-scratch") })
}
