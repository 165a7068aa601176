package fake_test

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/fake"
	"github.com/setpoint-dev/setpoint/client/interceptor"
)

func key(name string) client.ObjectKey { return client.ObjectKey{Namespace: "default", Name: name} }

func TestCreateGetConflict(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "cm-"}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Name) != len("cm-")+5 || cm.ResourceVersion == "" || cm.UID == "" {
		t.Fatalf("created %+v", cm.ObjectMeta)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: cm.Name}}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create twice: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, key(cm.Name), got); err != nil || got.Data["k"] != "v" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	got.Data["k"] = "mine"
	again := &corev1.ConfigMap{}
	_ = c.Get(ctx, key(cm.Name), again)
	if again.Data["k"] != "v" {
		t.Fatal("Get returned the stored object, not a copy")
	}
	stale := again.DeepCopy()
	again.Data["k"] = "v2"
	if err := c.Update(ctx, again); err != nil || again.ResourceVersion == stale.ResourceVersion {
		t.Fatalf("update: %v (rv %s)", err, again.ResourceVersion)
	}
	stale.Data["k"] = "lost"
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	_ = c.Get(ctx, key(cm.Name), again)
	if again.Data["k"] != "v2" {
		t.Fatalf("after the conflict: %v", again.Data)
	}
	if err := c.Get(ctx, key("missing"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
}

func TestFinalizersAndDeletion(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "f", Finalizers: []string{"x/y"}}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, key("f"), got); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("after delete with a finalizer: %+v, %v", got.ObjectMeta, err)
	}
	got.Finalizers = nil
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key("f"), got); !apierrors.IsNotFound(err) {
		t.Fatalf("after removing the last finalizer: %v", err)
	}
}

func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1))}}
	c := fake.NewClientBuilder().WithObjects(d).WithStatusSubresource(&appsv1.Deployment{}).Build()
	got := &appsv1.Deployment{}
	_ = c.Get(ctx, key("d"), got)
	got.Status.ReadyReplicas = 3
	got.Spec.Replicas = ptr(int32(2))
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReadyReplicas != 0 || *got.Spec.Replicas != 2 || got.Generation != 1 {
		t.Fatalf("update: status %+v replicas %d generation %d, want status ignored", got.Status, *got.Spec.Replicas, got.Generation)
	}
	got.Status.ReadyReplicas = 3
	got.Spec.Replicas = ptr(int32(9))
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReadyReplicas != 3 || *got.Spec.Replicas != 2 {
		t.Fatalf("status update: ready %d replicas %d, want 3 and 2 (spec ignored)", got.Status.ReadyReplicas, *got.Spec.Replicas)
	}
	before := got.DeepCopy()
	got.Status.ReadyReplicas = 4
	if err := c.Status().Patch(ctx, got, client.MergeFrom(before)); err != nil || got.Status.ReadyReplicas != 4 {
		t.Fatalf("status patch: %v, %d", err, got.Status.ReadyReplicas)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}}
	c2 := fake.NewClientBuilder().WithObjects(cm).Build()
	if err := c2.Status().Update(ctx, cm); !apierrors.IsNotFound(err) {
		t.Fatalf("status of a kind without the subresource: %v", err)
	}
}

func TestSelectorsAndIndexes(t *testing.T) {
	ctx := context.Background()
	pod := func(name, node string, l map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: l}, Spec: corev1.PodSpec{NodeName: node}}
	}
	c := fake.NewClientBuilder().
		WithObjects(pod("a", "n1", map[string]string{"app": "x"}), pod("b", "n2", map[string]string{"app": "x"}), pod("c", "n1", nil)).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		Build()
	l := &corev1.PodList{}
	if err := c.List(ctx, l, client.MatchingLabels{"app": "x"}); err != nil || len(l.Items) != 2 {
		t.Fatalf("label selector: %d, %v", len(l.Items), err)
	}
	if err := c.List(ctx, l, client.MatchingFields{"spec.nodeName": "n1"}); err != nil || len(l.Items) != 2 {
		t.Fatalf("field index: %d, %v", len(l.Items), err)
	}
	if err := c.List(ctx, l, client.MatchingFields{"spec.nodeName": "n1"}, client.MatchingLabels{"app": "x"}); err != nil || len(l.Items) != 1 || l.Items[0].Name != "a" {
		t.Fatalf("both: %v, %v", l.Items, err)
	}
	if err := c.List(ctx, l, client.MatchingFields{"spec.other": "n1"}); err == nil {
		t.Fatal("a field without index was accepted")
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace("default"), client.MatchingLabels{"app": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, l); err != nil || len(l.Items) != 1 || l.Items[0].Name != "c" {
		t.Fatalf("after DeleteAllOf: %v, %v", l.Items, err)
	}
	if err := c.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}},
		client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"p":"q"}}]`))); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, l, client.MatchingLabels{"p": "q"}); err != nil || len(l.Items) != 1 {
		t.Fatalf("after a JSON patch: %v, %v", l.Items, err)
	}
}

func TestInterceptor(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == "bad" {
				return boom
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bad"}}); !errors.Is(err, boom) {
		t.Fatalf("intercepted create: %v", err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "good"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key("bad"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the intercepted create stored the object: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
