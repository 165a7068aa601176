package controllerutil_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/controllerutil"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T) *rest.Client {
	t.Helper()
	return testserver.Start(t, testserver.Options{}).RESTClient(t)
}

func TestCreateOrUpdate(t *testing.T) {
	ctx := context.Background()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client(t), corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	want := "1"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}}
	mutate := func() error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["v"] = want
		return nil
	}
	op, err := controllerutil.CreateOrUpdate(ctx, cms, cm, mutate)
	if err != nil || op != controllerutil.OperationResultCreated {
		t.Fatalf("first call: %v, %v", op, err)
	}
	if cm.UID == "" || cm.ResourceVersion == "" {
		t.Fatal("obj must hold the created object")
	}
	rv := cm.ResourceVersion
	// Same desired state from a fresh object: a no-op, no write.
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg"}}
	op, err = controllerutil.CreateOrUpdate(ctx, cms, cm, mutate)
	if err != nil || op != controllerutil.OperationResultNone {
		t.Fatalf("unchanged call: %v, %v", op, err)
	}
	if cm.ResourceVersion != rv {
		t.Fatalf("no-op changed resourceVersion %s -> %s", rv, cm.ResourceVersion)
	}
	want = "2"
	op, err = controllerutil.CreateOrUpdate(ctx, cms, cm, mutate)
	if err != nil || op != controllerutil.OperationResultUpdated {
		t.Fatalf("update call: %v, %v", op, err)
	}
	live, err := cms.Namespace("default").Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil || live.Data["v"] != "2" || live.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("live = %+v, %v", live, err)
	}
	// mutate errors and renames are refused.
	boom := errors.New("boom")
	if _, err := controllerutil.CreateOrUpdate(ctx, cms, cm, func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("mutate error: %v", err)
	}
	if _, err := controllerutil.CreateOrUpdate(ctx, cms, cm, func() error { cm.Name = "other"; return nil }); err == nil {
		t.Fatal("rename accepted")
	}
}

func TestCreateOrUpdateConflict(t *testing.T) {
	ctx := context.Background()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client(t), corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}}
	_, err := controllerutil.CreateOrUpdate(ctx, cms, cm, func() error {
		// Someone else writes between our read and our update.
		other, err := cms.Get(ctx, "c", metav1.GetOptions{})
		if err != nil {
			return err
		}
		other.Data = map[string]string{"by": "other"}
		if _, err := cms.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
			return err
		}
		cm.Data = map[string]string{"by": "us"}
		return nil
	})
	if !apierrors.IsConflict(err) {
		t.Fatalf("want a conflict, got %v", err)
	}
}

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := appsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestControllerReference(t *testing.T) {
	s := newScheme(t)
	owner := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1"}}
	if err := controllerutil.SetControllerReference(owner, rs, s); err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != "web" || ref.UID != "u1" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("controller ref = %+v", ref)
	}
	// Idempotent, and a refreshed UID replaces the old reference.
	owner.UID = "u2"
	if err := controllerutil.SetControllerReference(owner, rs, s); err != nil || len(rs.OwnerReferences) != 1 || rs.OwnerReferences[0].UID != "u2" {
		t.Fatalf("second set: %v %+v", err, rs.OwnerReferences)
	}
	// Another controller is refused.
	other := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "u3"}}
	var owned *controllerutil.AlreadyOwnedError
	if err := controllerutil.SetControllerReference(other, rs, s); !errors.As(err, &owned) || owned.Owner.Name != "web" {
		t.Fatalf("want AlreadyOwnedError, got %v", err)
	}
	// But it may be a plain owner.
	if err := controllerutil.SetOwnerReference(other, rs, s); err != nil || len(rs.OwnerReferences) != 2 {
		t.Fatalf("SetOwnerReference: %v %+v", err, rs.OwnerReferences)
	}
	if !controllerutil.HasControllerReference(rs) {
		t.Fatal("HasControllerReference")
	}
	// Cross-namespace owners, owners without uid or kind are refused.
	far := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "x", UID: "u"}}
	if err := controllerutil.SetOwnerReference(far, rs, s); err == nil {
		t.Fatal("cross-namespace owner accepted")
	}
	if err := controllerutil.SetOwnerReference(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n"}}, rs, s); err == nil {
		t.Fatal("owner without uid accepted")
	}
	if err := controllerutil.SetOwnerReference(owner, rs, runtime.NewScheme()); err == nil {
		t.Fatal("owner of unknown kind accepted")
	}
	// A cluster-scoped owner may own a namespaced object.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n"}}
	if err := controllerutil.SetOwnerReference(node, rs, s); err != nil {
		t.Fatal(err)
	}
}

func TestFinalizersAndConditions(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
	if !controllerutil.AddFinalizer(cm, "example.com/cleanup") || controllerutil.AddFinalizer(cm, "example.com/cleanup") {
		t.Fatal("AddFinalizer must add once")
	}
	if !controllerutil.ContainsFinalizer(cm, "example.com/cleanup") {
		t.Fatal("ContainsFinalizer")
	}
	if !controllerutil.RemoveFinalizer(cm, "example.com/cleanup") || controllerutil.RemoveFinalizer(cm, "example.com/cleanup") {
		t.Fatal("RemoveFinalizer must remove once")
	}
	if len(cm.Finalizers) != 0 {
		t.Fatalf("finalizers left: %v", cm.Finalizers)
	}

	var conds []metav1.Condition
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "ok"}
	if !controllerutil.SetCondition(cm, &conds, ready) {
		t.Fatal("new condition not reported as a change")
	}
	c := meta.FindStatusCondition(conds, "Ready")
	if c == nil || c.ObservedGeneration != 7 || c.LastTransitionTime.IsZero() {
		t.Fatalf("condition = %+v", c)
	}
	if controllerutil.SetCondition(cm, &conds, ready) {
		t.Fatal("identical condition reported as a change")
	}
	cm.Generation = 8
	if !controllerutil.SetCondition(cm, &conds, ready) || meta.FindStatusCondition(conds, "Ready").ObservedGeneration != 8 {
		t.Fatal("a new generation must update observedGeneration")
	}
}
