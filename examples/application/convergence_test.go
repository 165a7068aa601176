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
	svc := get[corev1.Service](t, f, "api")
	if why := serviceMismatch(svc, app, 80); why != "" {
		t.Fatalf("service with the default port: %s", why)
	}

	d := get[appsv1.Deployment](t, f, "api")
	d.Spec.Replicas = ptr.To[int32](4)
	if err := f.client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replicas set back", func() string {
		return deploymentMismatch(get[appsv1.Deployment](t, f, "api"), app, 1, 80, "busybox:1.36")
	})
	f.waitEvent(t, string(app.UID), corev1.EventTypeNormal, application.ReasonUpdated, "Updated Deployment api")

	svc.Spec.Ports[0].Port = 1234
	if err := f.client.Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "service port set back", func() string { return serviceMismatch(get[corev1.Service](t, f, "api"), app, 80) })

	if err := f.client.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "service recreated", func() string {
		s := get[corev1.Service](t, f, "api")
		if s != nil && s.UID == svc.UID {
			return "the old service"
		}
		return serviceMismatch(s, app, 80)
	})

	// The record is recreated on the next reconcile (here: a label change).
	rec := application.RecordName("default", "api")
	if err := f.client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: application.RecordNamespace, Name: rec}}); err != nil {
		t.Fatal(err)
	}
	f.updateApp(t, "api", func(a *application.Application) { a.Labels = map[string]string{"team": "x"} })
	eventually(t, "record recreated", func() string {
		if r := f.record(t, rec); r == nil || r.Data["uid"] != string(app.UID) {
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
	if err := f.client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	app := f.create(t, newApp("shop", "nginx:1.25", 1, 0))
	f.waitEvent(t, string(app.UID), corev1.EventTypeWarning, application.ReasonNotOwned, "Service default/shop exists without a controller")
	eventually(t, "phase Failed", func() string {
		a := get[application.Application](t, f, "shop")
		c := meta.FindStatusCondition(a.Status.Conditions, application.ConditionProgressing)
		if a.Status.Phase != application.PhaseFailed || c == nil || c.Status != metav1.ConditionFalse || c.Reason != application.ReasonBlocked {
			return fmt.Sprintf("phase %s, Progressing %+v", a.Status.Phase, c)
		}
		return ""
	})
	if now := get[corev1.Service](t, f, "shop"); now.ResourceVersion != foreign.ResourceVersion {
		t.Fatalf("the foreign service was modified: %+v", now)
	}
	if err := f.client.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	f.waitRunning(t, "shop", 1)
	eventually(t, "our service", func() string { return serviceMismatch(get[corev1.Service](t, f, "shop"), app, 80) })
}

// TestApplicationInvalidName: an Application whose name cannot name a
// Service gets a Warning, phase Failed and nothing else: no finalizer
// (so it deletes at once), no Deployment.
func TestApplicationInvalidName(t *testing.T) {
	f := start(t, true)
	app := f.create(t, newApp("web.v1", "nginx:1.25", 1, 0))
	f.waitEvent(t, string(app.UID), corev1.EventTypeWarning, application.ReasonInvalid, `name "web.v1" cannot name a Service`)
	eventually(t, "phase Failed", func() string {
		if a := get[application.Application](t, f, "web.v1"); a.Status.Phase != application.PhaseFailed || len(a.Finalizers) != 0 {
			return fmt.Sprintf("phase %s finalizers %v", a.Status.Phase, a.Finalizers)
		}
		return ""
	})
	if d := get[appsv1.Deployment](t, f, "web.v1"); d != nil {
		t.Fatalf("deployment created: %+v", d.ObjectMeta)
	}
	if err := f.client.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted", func() string {
		if get[application.Application](t, f, "web.v1") != nil {
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
