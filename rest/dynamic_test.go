package rest_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

func TestDynamicAccess(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	cms := rest.Dynamic(c, cmGVR, true).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "dyn", "labels": map[string]any{"via": "dynamic"}},
		"data":     map[string]any{"k": "v"},
	}}
	created, err := cms.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetUID() == "" || created.GetKind() != "ConfigMap" {
		t.Fatalf("created = %v", created.Object)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	patched, err := cms.Patch(ctx, "dyn", types.MergePatchType, []byte(`{"data":{"k":"v2"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if v, _, _ := unstructured.NestedString(patched.Object, "data", "k"); v != "v2" {
		t.Errorf("patched data.k = %q", v)
	}
	ev := next(t, w)
	if u, ok := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Modified || !ok || u.GetName() != "dyn" {
		t.Errorf("dynamic watch event = %s %T", ev.Type, ev.Object)
	}
	l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "via=dynamic"})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "dyn" {
		t.Fatalf("list = %v, %v", l, err)
	}
	got, err := cms.Get(ctx, "dyn", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if err := unstructured.SetNestedField(got.Object, "v3", "data", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale dynamic update: %v, want Conflict", err)
	}
	if err := cms.Delete(ctx, "dyn", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// A group other than core: deployments through apps/v1.
	deps := rest.Dynamic(c, appsv1.SchemeGroupVersion.WithResource("deployments"), true)
	if _, err := deps.Namespace("default").Get(ctx, "none", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dynamic get of a missing deployment: %v, want NotFound", err)
	}
	if l, err := deps.List(ctx, metav1.ListOptions{}); err != nil || l.GetKind() != "DeploymentList" {
		t.Errorf("dynamic list of deployments: %v, %v", l, err)
	}
}
