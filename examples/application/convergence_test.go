package application_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/examples/application"
)

// TestApplicationKeptAsDesired: hand edits of the Deployment's replicas
// and the Service's ports are set back, a deleted Service and a deleted
// record are recreated, and the status stays Running.
func TestApplicationKeptAsDesired(t *testing.T) {
	f := start(t, true)
	ctx := context.Background()
	app := f.create(t, newApp("api", "busybox:1.36", 1, 0))
	f.waitRunning(t, "api", 1)
	svc := get(t, f.services.Get, "api")
	if why := serviceMismatch(svc, app, 80); why != "" {
		t.Fatalf("service with the default port: %s", why)
	}

	d := get(t, f.deployments.Get, "api")
	d.Spec.Replicas = ptr.To[int32](4)
	if _, err := f.deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replicas set back", func() string {
		return deploymentMismatch(get(t, f.deployments.Get, "api"), app, 1, 80, "busybox:1.36")
	})
	f.waitEvent(t, string(app.UID), corev1.EventTypeNormal, application.ReasonUpdated, "Updated Deployment api")

	svc.Spec.Ports[0].Port = 1234
	if _, err := f.services.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "service port set back", func() string { return serviceMismatch(get(t, f.services.Get, "api"), app, 80) })

	if err := f.services.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "service recreated", func() string {
		s := get(t, f.services.Get, "api")
		if s != nil && s.UID == svc.UID {
			return "the old service"
		}
		return serviceMismatch(s, app, 80)
	})

	// The record is recreated on the next reconcile (here: a label change).
	rec := application.RecordName("default", "api")
	if err := f.records.Delete(ctx, rec, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.updateApp(t, "api", func(a *application.Application) { a.Labels = map[string]string{"team": "x"} })
	eventually(t, "record recreated", func() string {
		if r := get(t, f.records.Get, rec); r == nil || r.Data["uid"] != string(app.UID) {
			return fmt.Sprintf("record %+v", r)
		}
		return ""
	})
	f.waitRunning(t, "api", 1)
}

// TestApplicationBlocked: a Service of the Application's name that the
// operator does not own is left alone; the Application reports Failed
// (Progressing=False, reason Blocked) with a NotOwned Warning, and once
// that Service is gone it gets its own and runs.
func TestApplicationBlocked(t *testing.T) {
	f := start(t, true)
	ctx := context.Background()
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "other"}, Ports: []corev1.ServicePort{{Port: 7000}}}}
	foreign, err := f.services.Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	app := f.create(t, newApp("shop", "nginx:1.25", 1, 0))
	f.waitEvent(t, string(app.UID), corev1.EventTypeWarning, application.ReasonNotOwned, "Service default/shop exists without a controller")
	eventually(t, "phase Failed", func() string {
		a := get(t, f.apps.Get, "shop")
		c := meta.FindStatusCondition(a.Status.Conditions, application.ConditionProgressing)
		if a.Status.Phase != application.PhaseFailed || c == nil || c.Status != metav1.ConditionFalse || c.Reason != application.ReasonBlocked {
			return fmt.Sprintf("phase %s, Progressing %+v", a.Status.Phase, c)
		}
		return ""
	})
	if now := get(t, f.services.Get, "shop"); now.ResourceVersion != foreign.ResourceVersion {
		t.Fatalf("the foreign service was modified: %+v", now)
	}
	if err := f.services.Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitRunning(t, "shop", 1)
	eventually(t, "our service", func() string { return serviceMismatch(get(t, f.services.Get, "shop"), app, 80) })
}

// TestApplicationInvalidName: an Application whose name cannot name a
// Service gets a Warning, phase Failed and nothing else: no finalizer
// (so it deletes at once), no Deployment.
func TestApplicationInvalidName(t *testing.T) {
	f := start(t, true)
	app := f.create(t, newApp("web.v1", "nginx:1.25", 1, 0))
	f.waitEvent(t, string(app.UID), corev1.EventTypeWarning, application.ReasonInvalid, `name "web.v1" cannot name a Service`)
	eventually(t, "phase Failed", func() string {
		if a := get(t, f.apps.Get, "web.v1"); a.Status.Phase != application.PhaseFailed || len(a.Finalizers) != 0 {
			return fmt.Sprintf("phase %s finalizers %v", a.Status.Phase, a.Finalizers)
		}
		return ""
	})
	if d := get(t, f.deployments.Get, "web.v1"); d != nil {
		t.Fatalf("deployment created: %+v", d.ObjectMeta)
	}
	if err := f.apps.Delete(context.Background(), "web.v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted", func() string {
		if get(t, f.apps.Get, "web.v1") != nil {
			return "still there"
		}
		return ""
	})
}

// deploymentStatus is a Deployment of generation 2 with the given status.
func deploymentStatus(observed, replicas, updated, ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: appsv1.DeploymentStatus{
		ObservedGeneration: int64(observed), Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: ready,
		AvailableReplicas: ready, Conditions: conds}}
}
