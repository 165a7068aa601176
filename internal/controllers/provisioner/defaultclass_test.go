package provisioner

import (
	"context"
	"github.com/setpoint-dev/setpoint/rest"
	corev1 "k8s.io/api/core/v1"
	"log/slog"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
)

// TestDefaultClassInstalledOnce: the first install creates the class and
// its record; later installs (a restarted controller manager) leave a
// changed or deleted class as the user left it.
func TestDefaultClassInstalledOnce(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	p, err := newProvisioner(mgr, Options{Name: DefaultName})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := &installer{p: p, c: mgr.Client()}
	classes := rest.For[*storagev1.StorageClass, *storagev1.StorageClassList](mgr.Client(), scGVR, false)
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](mgr.Client(), cmGVR, true)
	if err := in.install(ctx); err != nil {
		t.Fatal(err)
	}
	sc, err := classes.Get(ctx, DefaultClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" || sc.Provisioner != DefaultName ||
		*sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer || string(*sc.ReclaimPolicy) != "Delete" || !*sc.AllowVolumeExpansion {
		t.Errorf("class %+v", sc)
	}
	if _, err := cms.Namespace(MarkerNamespace).Get(ctx, MarkerName, metav1.GetOptions{}); err != nil {
		t.Errorf("record: %v", err)
	}
	// The user takes the default annotation off: kept.
	sc.Annotations = nil
	if _, err := classes.Update(ctx, sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := in.install(ctx); err != nil {
		t.Fatal(err)
	}
	if sc, _ := classes.Get(ctx, DefaultClassName, metav1.GetOptions{}); len(sc.Annotations) != 0 {
		t.Errorf("changed class reverted: %v", sc.Annotations)
	}
	// The user deletes it: it stays deleted.
	if err := classes.Delete(ctx, DefaultClassName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := in.install(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := classes.Get(ctx, DefaultClassName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deleted class came back: %v", err)
	}
}
