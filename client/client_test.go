package client_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/testenv"
)

// run starts a testenv (mutation detector on) and a manager on it, and
// returns the manager's client once it runs.
func run(t *testing.T) (*manager.Manager, client.Client) {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	mgr, err := manager.New(manager.Options{Config: env.Config, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunManager(t, mgr, nil)
	return mgr, mgr.GetClient()
}

// eventually retries get until it returns nil.
func eventually(t *testing.T, what string, get func() error) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, what, func() string {
		if err := get(); err != nil {
			return err.Error()
		}
		return ""
	})
}

func cm(name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}, Data: data}
}

// TestReadsAreDeepCopies: objects got or listed from the client are the
// caller's own: modifying them leaves the cache unchanged. With
// UnsafeDisableDeepCopy they are the cache's, and the mutation detector
// that testenv turns on reports a modification.
func TestReadsAreDeepCopies(t *testing.T) {
	ctx := context.Background()
	mgr, c := run(t)
	if err := c.Create(ctx, cm("a", map[string]string{"app": "x"}, map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	eventually(t, "configmap a cached", func() error { return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, got) })
	if got.Kind != "ConfigMap" || got.APIVersion != "v1" {
		t.Errorf("TypeMeta %+v, want v1 ConfigMap", got.TypeMeta)
	}
	got.Data["k"] = "changed"
	got.Labels["app"] = "changed"
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace("default")); err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %+v, %v", list.Items, err)
	}
	list.Items[0].Data["k"] = "changed too"
	again := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, again); err != nil {
		t.Fatal(err)
	}
	if again.Data["k"] != "v" || again.Labels["app"] != "x" {
		t.Fatalf("the cache changed with the copies: %+v %+v", again.Data, again.Labels)
	}
	if err := mgr.CheckCacheMutations(); err != nil {
		t.Fatalf("mutation detector after deep-copied reads: %v", err)
	}

	shared := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, shared, client.UnsafeDisableDeepCopy); err != nil {
		t.Fatal(err)
	}
	shared.Data["k"] = "mutated in the cache"
	err := mgr.CheckCacheMutations()
	var me *cache.MutationError
	if !errors.As(err, &me) || len(me.Keys) != 1 || me.Keys[0] != "default/a" {
		t.Fatalf("mutation detector: %v, want default/a reported", err)
	}
	shared.Data["k"] = "v" // restore, so that RunManager's final check passes
	if err := mgr.CheckCacheMutations(); err != nil {
		t.Fatalf("after restoring: %v", err)
	}
}

// TestReadsAndWrites: writes reach the server and come back through the
// cache; selectors, field indexes, unstructured and metadata-only reads,
// status and subresources, all patch types, deletes.
func TestReadsAndWrites(t *testing.T) {
	ctx := context.Background()
	env := testenv.StartT(t, testenv.Options{})
	mgr, err := manager.New(manager.Options{Config: env.Config, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "data.k", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["k"]}
	}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetClient().Get(ctx, client.ObjectKey{Name: "x"}, &corev1.Namespace{}); !errors.Is(err, client.ErrCacheNotStarted) {
		t.Fatalf("read before Start: %v, want ErrCacheNotStarted", err)
	}
	testenv.RunManager(t, mgr, nil)
	c := mgr.GetClient()

	for i, name := range []string{"a", "b", "c"} {
		app := map[string]string{"app": "one"}
		if i == 2 {
			app = map[string]string{"app": "two"}
		}
		if err := c.Create(ctx, cm(name, app, map[string]string{"k": name})); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, cm("a", nil, nil)); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create twice: %v", err)
	}
	count := func(opts ...client.ListOption) int {
		l := &corev1.ConfigMapList{}
		if err := c.List(ctx, l, append(opts, client.InNamespace("default"))...); err != nil {
			t.Fatal(err)
		}
		return len(l.Items) - countRootCA(l)
	}
	eventually(t, "three configmaps cached", func() error {
		if n := count(client.MatchingLabels{"app": "one"}); n != 2 {
			return errors.New("not yet")
		}
		return nil
	})
	if n := count(client.MatchingFields{"data.k": "b"}); n != 1 {
		t.Errorf("field index data.k=b: %d objects, want 1", n)
	}
	if n := count(client.MatchingFields{"metadata.name": "c"}); n != 1 {
		t.Errorf("metadata.name=c: %d objects, want 1", n)
	}
	if err := c.List(ctx, &corev1.ConfigMapList{}, client.MatchingFields{"data.nope": "b"}); err == nil {
		t.Error("a field selector without index was accepted")
	}

	// Update with a stale resourceVersion conflicts.
	a := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, a); err != nil {
		t.Fatal(err)
	}
	stale := a.DeepCopy()
	a.Data["k"] = "a2"
	if err := c.Update(ctx, a); err != nil || a.Data["k"] != "a2" {
		t.Fatalf("update: %v", err)
	}
	stale.Data["k"] = "lost"
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want a conflict", err)
	}

	// Merge, strategic, JSON patches and server-side apply.
	before := a.DeepCopy()
	a.Data["m"] = "merge"
	if err := c.Patch(ctx, a, client.MergeFrom(before, client.MergeFromWithOptimisticLock{})); err != nil || a.Data["m"] != "merge" {
		t.Fatalf("merge patch: %v, %v", a.Data, err)
	}
	before = a.DeepCopy()
	a.Labels["s"] = "strategic"
	if err := c.Patch(ctx, a, client.StrategicMergeFrom(before)); err != nil || a.Labels["s"] != "strategic" {
		t.Fatalf("strategic patch: %v, %v", a.Labels, err)
	}
	if err := c.Patch(ctx, a, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/data/j","value":"json"}]`))); err != nil || a.Data["j"] != "json" {
		t.Fatalf("json patch: %v, %v", a.Data, err)
	}
	applied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "applied"}, Data: map[string]string{"x": "1"}}
	if err := c.Patch(ctx, applied, client.Apply, client.FieldOwner("test"), client.ForceOwnership); err != nil || applied.UID == "" {
		t.Fatalf("apply: %+v, %v", applied, err)
	}

	// Unstructured reads (metadata-only ones: metadata_test.go).
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	eventually(t, "unstructured a2", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, u); err != nil {
			return err
		}
		if v, _, _ := unstructured.NestedString(u.Object, "data", "k"); v != "a2" {
			return errors.New("data.k is " + v)
		}
		return nil
	})
	// Status and subresources of a Deployment.
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	d.Status.ObservedGeneration = 7
	d.Spec.Replicas = ptr(int32(5))
	if err := c.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	if d.Status.ObservedGeneration != 7 || *d.Spec.Replicas != 1 {
		t.Fatalf("status update: observed %d replicas %d, want 7 and 1 (spec ignored)", d.Status.ObservedGeneration, *d.Spec.Replicas)
	}
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, d, scale); err != nil || scale.Spec.Replicas != 1 {
		t.Fatalf("scale: %+v, %v", scale, err)
	}

	// Deletes.
	if err := c.Delete(ctx, cm("c", nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"), client.MatchingLabels{"app": "one"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "configmaps deleted", func() error {
		if n := count(); n != 1 { // only "applied" is left
			return errors.New("not yet")
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "c"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: "default", Name: "applied"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("API reader: %v", err)
	}
}

func countRootCA(l *corev1.ConfigMapList) int {
	n := 0
	for _, i := range l.Items {
		if i.Name == "kube-root-ca.crt" {
			n++
		}
	}
	return n
}

func ptr[T any](v T) *T { return &v }
