package autoservice_test

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/examples/autoservice"
)

// TestForeignServiceLeftAlone: a Service of the wanted name written by
// hand (no controller, no managed-by label) or controlled by another
// object is neither changed nor deleted; the Deployment gets a Warning
// event; once the hand-made Service is gone, ours is created.
func TestForeignServiceLeftAlone(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	hand := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-service", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "hand"}, Ports: []corev1.ServicePort{port("", "TCP", 7000)}}}
	if err := f.client.Create(ctx, hand); err != nil {
		t.Fatal(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "default"}}
	if err := f.client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	owned := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api-service", Namespace: "default",
		Labels: map[string]string{autoservice.ManagedByLabel: autoservice.ManagedBy},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true)}}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "cm"}, Ports: []corev1.ServicePort{port("", "TCP", 7001)}}}
	if err := f.client.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}

	web := f.create(t, deployment("web", "true"))
	api := f.create(t, deployment("api", "true"))
	f.waitEvent(t, string(web.UID), corev1.EventTypeWarning, autoservice.ReasonNotOwned, "exists without a controller")
	f.waitEvent(t, string(api.UID), corev1.EventTypeWarning, autoservice.ReasonNotOwned, "controlled by ConfigMap owner")
	unchanged := func(before *corev1.Service) {
		t.Helper()
		now := f.service(t, before.Name)
		if now == nil || now.UID != before.UID || now.ResourceVersion != before.ResourceVersion ||
			!maps.Equal(now.Spec.Selector, before.Spec.Selector) {
			t.Fatalf("foreign service %s was touched: before %+v, now %+v", before.Name, before, now)
		}
	}
	unchanged(hand)
	unchanged(owned)

	// Without the annotation the foreign Service is not ours to delete.
	// With one worker, the marker's Service appears only after web's
	// reconcile of the removal ran.
	f.setAnnotation(t, "web", "")
	marker := f.create(t, deployment("marker", "true"))
	eventually(t, "marker service", func() string {
		return matches(f.service(t, "marker-service"), marker, []corev1.ServicePort{port("", "TCP", 80)})
	})
	unchanged(hand)

	// Once the hand-made Service is deleted, the retries create ours.
	f.setAnnotation(t, "web", "true")
	if err := f.client.Delete(ctx, hand); err != nil {
		t.Fatal(err)
	}
	eventually(t, "our service after the foreign one went", func() string {
		return matches(f.service(t, "web-service"), web, []corev1.ServicePort{port("", "TCP", 80)})
	})
	unchanged(owned)
}

// TestInvalidDeployment: a Deployment whose name makes an invalid Service
// name, or whose selector has no matchLabels, gets a Warning event saying
// why, and no Service.
func TestInvalidDeployment(t *testing.T) {
	f := start(t)
	dotted := f.create(t, deployment("web.v1", "true"))
	exprs := deployment("exprs", "true")
	exprs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"exprs"}}}}
	exprs = f.create(t, exprs)
	f.waitEvent(t, string(dotted.UID), corev1.EventTypeWarning, autoservice.ReasonInvalid, `service name "web.v1-service"`)
	f.waitEvent(t, string(exprs.UID), corev1.EventTypeWarning, autoservice.ReasonInvalid, "no matchLabels")
	if s := f.service(t, "exprs-service"); s != nil {
		t.Fatalf("exprs-service exists: %+v", s.Spec)
	}
}
