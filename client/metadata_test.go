package client_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/client"
)

const widgetsCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "widgets.example.com"},
 "spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}`

// TestMetadataOnlyReads: Get and List of PartialObjectMetadata through
// the cached client, for a built-in kind and a custom resource. The
// metadata-only informer (listing and watching
// as=PartialObjectMetadata) is kept apart from the typed one of the same
// kind, follows later changes, and hands out copies; the API reader reads
// metadata from the server.
func TestMetadataOnlyReads(t *testing.T) {
	ctx := context.Background()
	mgr, c := run(t)
	if err := c.Create(ctx, cm("meta", map[string]string{"app": "m"}, map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "default", Name: "meta"}
	pom := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	eventually(t, "metadata of configmap meta", func() error { return c.Get(ctx, key, pom) })
	if pom.Labels["app"] != "m" || pom.UID == "" || pom.Kind != "ConfigMap" || pom.APIVersion != "v1" {
		t.Fatalf("metadata: %+v", pom)
	}
	// The typed informer of the same kind is another one, with the data.
	typed := &corev1.ConfigMap{}
	eventually(t, "typed configmap meta", func() error { return c.Get(ctx, key, typed) })
	if typed.Data["k"] != "v" {
		t.Fatalf("typed read after the metadata-only one: %+v", typed)
	}
	poms := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
	if err := c.List(ctx, poms, client.InNamespace("default"), client.MatchingLabels{"app": "m"}); err != nil {
		t.Fatal(err)
	}
	if len(poms.Items) != 1 || poms.Items[0].Name != "meta" || poms.Items[0].Kind != "ConfigMap" {
		t.Fatalf("metadata list: %+v", poms.Items)
	}
	// A copy: modifying it leaves the cache alone.
	poms.Items[0].Labels["app"] = "changed"
	pom.Labels["app"] = "changed"
	if err := mgr.CheckCacheMutations(); err != nil {
		t.Fatalf("mutation detector after metadata reads: %v", err)
	}
	// Later changes arrive through the metadata-only watch.
	typed.Labels["app"] = "m2"
	if err := c.Update(ctx, typed); err != nil {
		t.Fatal(err)
	}
	eventually(t, "relabelled metadata", func() error {
		got := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
		if err := c.Get(ctx, key, got); err != nil {
			return err
		}
		if got.Labels["app"] != "m2" {
			return fmt.Errorf("label app=%q", got.Labels["app"])
		}
		return nil
	})
	direct := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	if err := mgr.GetAPIReader().Get(ctx, key, direct); err != nil || direct.Labels["app"] != "m2" || direct.UID != typed.UID {
		t.Fatalf("API reader metadata get: %+v, %v", direct, err)
	}
	directList := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
	if err := mgr.GetAPIReader().List(ctx, directList, client.InNamespace("default"), client.MatchingLabels{"app": "m2"}); err != nil ||
		len(directList.Items) != 1 || directList.Items[0].Name != "meta" {
		t.Fatalf("API reader metadata list: %+v, %v", directList.Items, err)
	}

	// A custom resource, read as metadata only.
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(widgetsCRD)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w1", "labels": map[string]any{"size": "s"}},
		"spec":     map[string]any{"color": "red"}}}
	eventually(t, "widget created", func() error { return c.Create(ctx, widget.DeepCopy()) })
	wkey := client.ObjectKey{Namespace: "default", Name: "w1"}
	wm := &metav1.PartialObjectMetadata{}
	wm.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	eventually(t, "metadata of widget w1", func() error { return c.Get(ctx, wkey, wm) })
	if wm.Labels["size"] != "s" || wm.Kind != "Widget" || wm.APIVersion != "example.com/v1" {
		t.Fatalf("widget metadata: %+v", wm)
	}
	wl := &metav1.PartialObjectMetadataList{}
	wl.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "WidgetList"})
	if err := c.List(ctx, wl); err != nil || len(wl.Items) != 1 || wl.Items[0].Name != "w1" {
		t.Fatalf("widget metadata list: %+v, %v", wl.Items, err)
	}
	// A missing object is NotFound, as for typed reads.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nope"}, wm); err == nil {
		t.Fatal("get of a missing widget succeeded")
	}
}
