package application_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/fake"
	"github.com/setpoint-dev/setpoint/client/interceptor"
	"github.com/setpoint-dev/setpoint/examples/application"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

func unitScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := rest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := application.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func webApp() *application.Application {
	return &application.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: application.ApplicationSpec{Image: "nginx:1.25"}}
}

func reconcileWeb(t *testing.T, r *application.Reconciler) error {
	t.Helper()
	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}})
	return err
}

// TestUnitReconcileCreatesOwnedObjects: on the fake client, one reconcile
// of a new Application adds the finalizer and creates the record, the
// Deployment and the Service, owned by the Application, and writes status
// through the status subresource.
func TestUnitReconcileCreatesOwnedObjects(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(unitScheme(t)).WithObjects(webApp()).
		WithStatusSubresource(&application.Application{}).Build()
	ev := &record.FakeRecorder{}
	r := application.New(c, ev, clocktesting.NewFakePassiveClock(time.Unix(1e9, 0)), slog.New(slog.DiscardHandler))
	if err := reconcileWeb(t, r); err != nil {
		t.Fatal(err)
	}
	app := &application.Application{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, app); err != nil {
		t.Fatal(err)
	}
	if len(app.Finalizers) != 1 || app.Finalizers[0] != application.Finalizer {
		t.Errorf("finalizers %v", app.Finalizers)
	}
	if app.Status.Phase != application.PhasePending {
		t.Errorf("phase %q, want Pending (no ready replicas)", app.Status.Phase)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(d, app) || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.25" {
		t.Errorf("deployment %+v", d.ObjectMeta.OwnerReferences)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &corev1.Service{}); err != nil {
		t.Errorf("service: %v", err)
	}
	rec := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: application.RecordNamespace, Name: application.RecordName("default", "web")}, rec); err != nil {
		t.Errorf("record: %v", err)
	}
	if len(ev.Events()) < 3 {
		t.Errorf("events %v", ev.Events())
	}
}

// TestUnitFinalizeDeletesRecord: deleting the Application (the finalizer
// holds it) makes the reconcile delete the record and release the
// finalizer, after which the Application is gone.
func TestUnitFinalizeDeletesRecord(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(unitScheme(t)).WithObjects(webApp()).
		WithStatusSubresource(&application.Application{}).Build()
	r := application.New(c, &record.FakeRecorder{}, clocktesting.NewFakePassiveClock(time.Unix(1e9, 0)), slog.New(slog.DiscardHandler))
	if err := reconcileWeb(t, r); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, webApp()); err != nil {
		t.Fatal(err)
	}
	if err := reconcileWeb(t, r); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: application.RecordNamespace, Name: application.RecordName("default", "web")}
	if err := c.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("record after finalize: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &application.Application{}); !apierrors.IsNotFound(err) {
		t.Errorf("application after finalize: %v", err)
	}
}

// TestUnitWriteErrorsAreReturned: a failing Deployment create (injected)
// fails the reconcile with that error and records a Warning.
func TestUnitWriteErrorsAreReturned(t *testing.T) {
	boom := errors.New("injected")
	c := fake.NewClientBuilder().WithScheme(unitScheme(t)).WithObjects(webApp()).
		WithStatusSubresource(&application.Application{}).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*appsv1.Deployment); ok {
				return boom
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	ev := &record.FakeRecorder{}
	r := application.New(c, ev, clocktesting.NewFakePassiveClock(time.Unix(1e9, 0)), slog.New(slog.DiscardHandler))
	if err := reconcileWeb(t, r); !errors.Is(err, boom) {
		t.Fatalf("reconcile: %v, want the injected error", err)
	}
	found := false
	for _, e := range ev.Events() {
		if len(e) > 7 && e[:7] == "Warning" {
			found = true
		}
	}
	if !found {
		t.Errorf("no Warning event: %v", ev.Events())
	}
}
