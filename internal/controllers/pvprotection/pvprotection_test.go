package pvprotection_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/pvprotection"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A deleted volume stays while Bound and goes once it is not; an Available
// one goes at once.
func TestVolumeHeldWhileBound(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	if err := pvprotection.Add(mgr, pvprotection.Options{}); err != nil {
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
	pvs := rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](mgr.Client(), corev1.SchemeGroupVersion.WithResource("persistentvolumes"), false)
	volume := func(name string, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
		t.Helper()
		pv, err := pvs.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/d/" + name}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = phase
		if pv, err = pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return pv
	}
	gone := func(name string) bool { _, err := pvs.Get(ctx, name, metav1.GetOptions{}); return err != nil }
	wait := func(what string, cond func() bool) {
		t.Helper()
		testwait.UntilEvery(t, 15*time.Second, 20*time.Millisecond, what, testwait.Bool(cond))
	}
	volume("bound", corev1.VolumeBound)
	volume("free", corev1.VolumeAvailable)
	for _, n := range []string{"bound", "free"} {
		if err := pvs.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait("available volume removed", func() bool { return gone("free") })
	time.Sleep(300 * time.Millisecond)
	pv, err := pvs.Get(ctx, "bound", metav1.GetOptions{})
	if err != nil || pv.DeletionTimestamp == nil {
		t.Fatalf("bound volume not held: %v", err)
	}
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("released volume removed", func() bool { return gone("bound") })
}
