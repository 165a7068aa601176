package autoservice_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/fake"
	"github.com/setpoint-dev/setpoint/examples/autoservice"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
)

// has reports whether rec recorded an event starting with prefix
// ("<type> <reason>").
func has(rec *record.FakeRecorder, prefix string) bool {
	for _, ev := range rec.Events() {
		if strings.HasPrefix(ev, prefix) {
			return true
		}
	}
	return false
}

// unit is a Reconciler on a fake client holding objs.
func unit(objs ...client.Object) (*autoservice.Reconciler, client.Client, *record.FakeRecorder) {
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	ev := &record.FakeRecorder{}
	return autoservice.New(c, ev, slog.New(slog.DiscardHandler)), c, ev
}

func withUID(d *appsv1.Deployment) *appsv1.Deployment {
	d.UID = types.UID("uid-" + d.Name)
	return d
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}}
}

// TestUnitCreatesAndDeletesService: on the fake client, an annotated
// Deployment gets its Service (ports, selector, controller reference, an
// event); without the annotation the Service it controls is deleted.
func TestUnitCreatesAndDeletesService(t *testing.T) {
	d := withUID(deployment("web", "true", []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}))
	r, c, ev := unit(d)
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, request("web")); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: autoservice.ServiceName("web")}, svc); err != nil {
		t.Fatalf("the Service was not created: %v", err)
	}
	if !metav1.IsControlledBy(svc, d) || svc.Spec.Selector["app"] != "web" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
		t.Errorf("the Service: owners %v selector %v ports %v", svc.OwnerReferences, svc.Spec.Selector, svc.Spec.Ports)
	}
	if !has(ev, "Normal "+autoservice.ReasonCreated) {
		t.Errorf("events: %v", ev.Events())
	}

	cur := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), cur); err != nil {
		t.Fatal(err)
	}
	delete(cur.Annotations, autoservice.Annotation)
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, request("web")); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), &corev1.Service{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Service outlived the annotation: %v", err)
	}
	if !has(ev, "Normal "+autoservice.ReasonDeleted) {
		t.Errorf("events: %v", ev.Events())
	}
}

// TestUnitLeavesForeignService: a Service of the same name that someone
// else controls is left alone, with a Warning event and an error (so the
// key is retried).
func TestUnitLeavesForeignService(t *testing.T) {
	d := withUID(deployment("api", "true", []corev1.ContainerPort{{ContainerPort: 80}}))
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: autoservice.ServiceName("api"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "x", Controller: new(bool)}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}}}
	*foreign.OwnerReferences[0].Controller = true
	r, c, ev := unit(d, foreign)
	ctx := context.Background()
	_, err := r.Reconcile(ctx, request("api"))
	var notOwned *autoservice.NotOwnedError
	if err == nil || !errors.As(err, &notOwned) {
		t.Fatalf("reconcile: %v, want a NotOwnedError", err)
	}
	got := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil || got.Spec.Ports[0].Port != 1 {
		t.Errorf("the foreign Service was changed: %v %v", err, got.Spec.Ports)
	}
	if !has(ev, "Warning "+autoservice.ReasonNotOwned) {
		t.Errorf("events: %v", ev.Events())
	}
}
