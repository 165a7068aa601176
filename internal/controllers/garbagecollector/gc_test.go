package garbagecollector_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// Background deletion of a Deployment removes its ReplicaSet, and the
// ReplicaSet's removal its Pod: a chain over three kinds in two groups.
func TestBackgroundChainAcrossKinds(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	deps := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](e.c, appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace("default")
	rss := rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](e.c, appsv1.SchemeGroupVersion.WithResource("replicasets"), true).Namespace("default")
	pods := rest.For[*corev1.Pod, *corev1.PodList](e.c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default")
	d, err := deps.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rss.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: tmpl.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bg := metav1.DeletePropagationBackground
	if err := deps.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		_, rsErr := rss.Get(ctx, "web-1", metav1.GetOptions{})
		_, podErr := pods.Get(ctx, "web-1-a", metav1.GetOptions{})
		return apierrors.IsNotFound(rsErr) && apierrors.IsNotFound(podErr), fmt.Sprintf("replicaset: %v, pod: %v", rsErr, podErr)
	})
}

// Background deletion of a config map chain, and the default (no policy:
// background for these kinds, as in Kubernetes).
func TestBackgroundChain(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	owner := e.createCM(t, "default", "owner", nil)
	dep := e.createCM(t, "default", "dep", nil, ref(owner, false))
	e.createCM(t, "default", "grand", nil, ref(dep, false))
	if err := e.cms("default").Delete(context.Background(), "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone(t, "default", "dep", "grand")
}

// Foreground: the owner stays, marked and holding foregroundDeletion,
// until its blocking dependents are gone; then it goes too.
func TestForegroundDeletion(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	const hold = "example.com/hold"
	owner := e.createCM(t, "default", "owner", nil)
	dep := e.createCM(t, "default", "dep", []string{hold}, ref(owner, true))
	e.createCM(t, "default", "grand", nil, ref(dep, true))
	e.createCM(t, "default", "loose", nil, ref(owner, false)) // not blocking, still collected
	e.deleteCM(t, "default", "owner", metav1.DeletePropagationForeground)

	e.waitGone(t, "default", "grand", "loose")
	eventually(t, 20*time.Second, func() (bool, string) {
		d := e.getCM(t, "default", "dep")
		return d != nil && d.DeletionTimestamp != nil && slices.Equal(d.Finalizers, []string{hold}),
			fmt.Sprintf("dep = %+v, want terminating with only %s left", d, hold)
	})
	o := e.getCM(t, "default", "owner")
	if o == nil || o.DeletionTimestamp == nil || !slices.Contains(o.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner = %+v, want it kept with deletionTimestamp and %s while dep blocks", o, metav1.FinalizerDeleteDependents)
	}
	// Release the blocking dependent: it goes, then the owner.
	if _, err := e.cms("default").Patch(context.Background(), "dep", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitGone(t, "default", "dep", "owner")
}

// Orphan: the dependents stay with the reference removed; the owner goes.
func TestOrphanDeletion(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	owner := e.createCM(t, "default", "owner", nil)
	other := e.createCM(t, "default", "other", nil)
	e.createCM(t, "default", "d1", nil, ref(owner, true))
	e.createCM(t, "default", "d2", nil, ref(owner, false), ref(other, false))
	e.deleteCM(t, "default", "owner", metav1.DeletePropagationOrphan)
	e.waitGone(t, "default", "owner")
	d1, d2 := e.getCM(t, "default", "d1"), e.getCM(t, "default", "d2")
	if d1 == nil || len(d1.OwnerReferences) != 0 {
		t.Errorf("d1 = %+v, want it kept without owner references", d1)
	}
	if d2 == nil || !slices.Equal(ownerUIDs(d2), []types.UID{other.UID}) {
		t.Errorf("d2 = %+v, want it kept with only the reference to other", d2)
	}
}

// A dependent whose owner never existed is collected: a made-up
// namespaced owner and a made-up cluster-scoped one (a Node).
func TestOwnerNeverExisted(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	e.createCM(t, "default", "orphan-ns", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "made-up-1"})
	e.createCM(t, "default", "orphan-cluster", nil, metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "ghost", UID: "made-up-2"})
	e.waitGone(t, "default", "orphan-ns", "orphan-cluster")
}

// An owner reference whose uid is not the live object's counts as absent
// (the owner was recreated under the same name); the right uid is solid.
func TestStaleOwnerUID(t *testing.T) {
	e := newEnv(t)
	owner := e.createCM(t, "default", "owner", nil)
	stale := ref(owner, false)
	stale.UID = "stale-uid"
	e.createCM(t, "default", "stale-dep", nil, stale)
	e.createCM(t, "default", "good-dep", nil, ref(owner, false))
	e.runGC(t)
	e.waitGone(t, "default", "stale-dep")
	// Recreate the owner: the good dependent's reference becomes stale too.
	e.deleteCM(t, "default", "owner", metav1.DeletePropagationOrphan)
	e.waitGone(t, "default", "owner")
	if d := e.getCM(t, "default", "good-dep"); d == nil || len(d.OwnerReferences) != 0 {
		t.Fatalf("good-dep = %+v, want it orphaned", d)
	}
	owner2 := e.createCM(t, "default", "owner", nil)
	e.createCM(t, "default", "dep-of-old", nil, ref(owner, false))
	e.createCM(t, "default", "dep-of-new", nil, ref(owner2, false))
	e.waitGone(t, "default", "dep-of-old")
	if e.getCM(t, "default", "dep-of-new") == nil {
		t.Fatal("dep-of-new was deleted although its owner exists")
	}
}

// A dependent with two owners survives while one remains (and loses the
// reference to the one deleted); it goes with the second.
func TestTwoOwners(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	a := e.createCM(t, "default", "a", nil)
	b := e.createCM(t, "default", "b", nil)
	e.createCM(t, "default", "dep", nil, ref(a, true), ref(b, true))
	e.deleteCM(t, "default", "a", metav1.DeletePropagationForeground)
	e.waitGone(t, "default", "a")
	eventually(t, 20*time.Second, func() (bool, string) {
		d := e.getCM(t, "default", "dep")
		return d != nil && slices.Equal(ownerUIDs(d), []types.UID{b.UID}), fmt.Sprintf("dep = %+v, want only b as owner", d)
	})
	e.deleteCM(t, "default", "b", metav1.DeletePropagationBackground)
	e.waitGone(t, "default", "dep")
}

// The graph is rebuilt from the informers' initial lists after a restart:
// deletions made while no collector ran are completed.
func TestRestartRebuildsGraph(t *testing.T) {
	e := newEnv(t)
	stop := e.runGC(t)
	bgOwner := e.createCM(t, "default", "bg-owner", nil)
	e.createCM(t, "default", "bg-dep", nil, ref(bgOwner, false))
	fgOwner := e.createCM(t, "default", "fg-owner", nil)
	e.createCM(t, "default", "fg-dep", nil, ref(fgOwner, true))
	orOwner := e.createCM(t, "default", "or-owner", nil)
	e.createCM(t, "default", "or-dep", nil, ref(orOwner, true))
	stop()

	e.deleteCM(t, "default", "bg-owner", metav1.DeletePropagationBackground)
	e.deleteCM(t, "default", "fg-owner", metav1.DeletePropagationForeground)
	e.deleteCM(t, "default", "or-owner", metav1.DeletePropagationOrphan)
	if e.getCM(t, "default", "bg-dep") == nil || e.getCM(t, "default", "fg-owner") == nil || e.getCM(t, "default", "or-owner") == nil {
		t.Fatal("something was collected while no collector ran")
	}
	e.runGC(t)
	e.waitGone(t, "default", "bg-dep", "fg-dep", "fg-owner", "or-owner")
	if d := e.getCM(t, "default", "or-dep"); d == nil || len(d.OwnerReferences) != 0 {
		t.Fatalf("or-dep = %+v, want it orphaned", d)
	}
}

// A cluster-scoped object naming a namespaced owner is not collected
// (Kubernetes: the reference cannot be resolved), while the same made-up
// owner collects a namespaced dependent.
func TestClusterScopedDependentOfNamespacedOwner(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](e.c, nsGVR, false)
	bad := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "made-up"}
	if _, err := nss.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept",
		OwnerReferences: []metav1.OwnerReference{bad}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createCM(t, "default", "collected", nil, bad)
	e.waitGone(t, "default", "collected")
	events := rest.For[*corev1.Event, *corev1.EventList](e.c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace("default")
	eventually(t, 20*time.Second, func() (bool, string) {
		l, err := events.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, ev := range l.Items {
			if ev.Reason == "OwnerRefInvalidNamespace" && ev.InvolvedObject.Name == "kept" && ev.InvolvedObject.Kind == "Namespace" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no OwnerRefInvalidNamespace event among %d", len(l.Items))
	})
	ns, err := nss.Get(context.Background(), "kept", metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("namespace kept = %+v, %v; want it untouched", ns, err)
	}
}

// Foreground deletion through an ownership cycle (a owns b, b owns a, both
// blocking) ends: the dependent stops blocking, and both go.
func TestForegroundCycle(t *testing.T) {
	e := newEnv(t)
	e.runGC(t)
	a := e.createCM(t, "default", "a", nil)
	b := e.createCM(t, "default", "b", nil, ref(a, true))
	a.OwnerReferences = []metav1.OwnerReference{ref(b, true)}
	if _, err := e.cms("default").Update(context.Background(), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.deleteCM(t, "default", "a", metav1.DeletePropagationForeground)
	e.waitGone(t, "default", "a", "b")
}
