package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/fake"
)

func applyCM(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
}

// owners maps each manager of obj's managed fields to its operation.
func owners(obj metav1.Object) map[string]metav1.ManagedFieldsOperationType {
	out := map[string]metav1.ManagedFieldsOperationType{}
	for _, e := range obj.GetManagedFields() {
		out[e.Manager] = e.Operation
	}
	return out
}

// owns tells whether manager's entry of obj lists the field path (as
// FieldsV1 writes it, e.g. `"f:x"`).
func owns(obj metav1.Object, manager, field string) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), field) {
			return true
		}
	}
	return false
}

// TestApply: server-side apply creates, tracks ownership per manager,
// answers a conflicting apply with 409 naming the owner (the store
// unchanged), takes fields with ForceOwnership, removes fields an applier
// stops applying, and conflicts with a field an Update set.
func TestApply(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()

	if err := c.Patch(ctx, applyCM("cfg", map[string]string{"x": "1"}), client.Apply); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "fieldManager: Required value: is required for apply patch") {
		t.Fatalf("apply without a field manager: %v, want 422", err)
	}
	if err := c.Get(ctx, key("cfg"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the refused apply: %v, want NotFound", err)
	}

	a := applyCM("cfg", map[string]string{"x": "1", "y": "2"})
	if err := c.Patch(ctx, a, client.Apply, client.FieldOwner("a")); err != nil {
		t.Fatalf("apply creates: %v", err)
	}
	if a.UID == "" || a.ResourceVersion == "" || a.Data["x"] != "1" || owners(a)["a"] != metav1.ManagedFieldsOperationApply || !owns(a, "a", `"f:x"`) {
		t.Fatalf("created by apply: %+v", a.ObjectMeta)
	}
	created := a.DeepCopy()

	b := applyCM("cfg", map[string]string{"x": "other"})
	err := c.Patch(ctx, b, client.Apply, client.FieldOwner("b"))
	var st apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &st) {
		t.Fatalf("conflicting apply: %v, want 409", err)
	}
	causes := st.Status().Details.Causes
	if len(causes) != 1 || causes[0].Type != metav1.CauseTypeFieldManagerConflict || causes[0].Field != ".data.x" ||
		!strings.Contains(causes[0].Message, `conflict with "a"`) {
		t.Fatalf("conflict causes %+v", causes)
	}
	stored := &corev1.ConfigMap{}
	if err := c.Get(ctx, key("cfg"), stored); err != nil || stored.ResourceVersion != created.ResourceVersion || stored.Data["x"] != "1" {
		t.Fatalf("store changed by a refused apply: %+v, %v", stored, err)
	}

	if err := c.Patch(ctx, b, client.Apply, client.FieldOwner("b"), client.ForceOwnership); err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if b.Data["x"] != "other" || b.Data["y"] != "2" || !owns(b, "b", `"f:x"`) || owns(b, "a", `"f:x"`) || !owns(b, "a", `"f:y"`) {
		t.Fatalf("after the forced apply: %v %+v", b.Data, b.ManagedFields)
	}

	// a stops applying y (and x, taken by b): y goes, x stays b's.
	a2 := applyCM("cfg", map[string]string{"z": "3"})
	if err := c.Patch(ctx, a2, client.Apply, client.FieldOwner("a")); err != nil {
		t.Fatal(err)
	}
	if _, ok := a2.Data["y"]; ok || a2.Data["x"] != "other" || a2.Data["z"] != "3" {
		t.Fatalf("after a dropped y: %v", a2.Data)
	}

	// A field set by an Update belongs to its manager: applying another
	// value conflicts with it.
	u := &corev1.ConfigMap{}
	if err := c.Get(ctx, key("cfg"), u); err != nil {
		t.Fatal(err)
	}
	u.Data["w"] = "ctrl"
	if err := c.Update(ctx, u, client.FieldOwner("ctrl")); err != nil {
		t.Fatal(err)
	}
	if owners(u)["ctrl"] != metav1.ManagedFieldsOperationUpdate || !owns(u, "ctrl", `"f:w"`) {
		t.Fatalf("update entry: %+v", u.ManagedFields)
	}
	err = c.Patch(ctx, applyCM("cfg", map[string]string{"z": "3", "w": "mine"}), client.Apply, client.FieldOwner("a"))
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "ctrl"`) {
		t.Fatalf("apply over an updated field: %v, want a conflict with ctrl", err)
	}
	// The same value is no conflict: both own it.
	if err := c.Patch(ctx, applyCM("cfg", map[string]string{"z": "3", "w": "ctrl"}), client.Apply, client.FieldOwner("a")); err != nil {
		t.Fatalf("apply of the same value: %v", err)
	}
}

// TestApplyStatus: with a status subresource, apply through the main
// resource leaves status alone and Status().Patch(Apply) changes only
// status; apply of a missing object's status is 404.
func TestApplyStatus(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithStatusSubresource(&appsv1.Deployment{}).Build()
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(2))}}
	st := d.DeepCopy()
	st.Status.ObservedGeneration = 9
	if err := c.Status().Patch(ctx, st, client.Apply, client.FieldOwner("ctrl")); !apierrors.IsNotFound(err) {
		t.Fatalf("status apply of a missing object: %v, want 404", err)
	}
	if err := c.Patch(ctx, d, client.Apply, client.FieldOwner("user")); err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 {
		t.Fatalf("generation %d after apply-create", d.Generation)
	}
	st = &appsv1.Deployment{TypeMeta: d.TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(7))}, Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2}}
	if err := c.Status().Patch(ctx, st, client.Apply, client.FieldOwner("ctrl")); err != nil {
		t.Fatal(err)
	}
	if *st.Spec.Replicas != 2 || st.Status.Replicas != 2 || st.Generation != 1 || !owns(st, "ctrl", `"f:replicas"`) {
		t.Fatalf("status apply: spec %d status %+v gen %d fields %+v", *st.Spec.Replicas, st.Status, st.Generation, st.ManagedFields)
	}
	d = &appsv1.Deployment{TypeMeta: d.TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3))}, Status: appsv1.DeploymentStatus{Replicas: 99}}
	if err := c.Patch(ctx, d, client.Apply, client.FieldOwner("user")); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || d.Status.Replicas != 2 || d.Generation != 2 {
		t.Fatalf("main apply: spec %d status %d gen %d", *d.Spec.Replicas, d.Status.Replicas, d.Generation)
	}
}
