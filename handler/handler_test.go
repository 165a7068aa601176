package handler_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/workqueue"
)

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// drain takes every ready item out of q, in the order Get hands them out.
func drain(q *workqueue.Queue[reconcile.Request]) []reconcile.Request {
	var out []reconcile.Request
	for q.Len() > 0 {
		r, _ := q.Get()
		q.Done(r)
		out = append(out, r)
	}
	return out
}

func equal(a, b []reconcile.Request) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestObjectHandlerPriorities(t *testing.T) {
	q := workqueue.New[reconcile.Request]()
	defer q.ShutDown()
	h := handler.New(q, handler.Object[*corev1.ConfigMap]())
	mk := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
	}
	// Initial list and resync go low; a live add and a real update overtake them.
	h.OnAdd(mk("initial"), true)
	resynced := mk("resynced")
	h.OnUpdate(resynced, resynced)
	h.OnAdd(mk("live"), false)
	h.OnUpdate(mk("changed"), mk("changed"))
	h.OnDelete(mk("gone"), true)
	got := drain(q)
	want := []reconcile.Request{req("ns", "live"), req("ns", "changed"), req("ns", "gone"), req("ns", "initial"), req("ns", "resynced")}
	if !equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPredicatesFilter(t *testing.T) {
	q := workqueue.New[reconcile.Request]()
	defer q.ShutDown()
	h := handler.New(q, handler.Object[*appsv1.Deployment](), predicate.GenerationChanged(),
		predicate.Funcs{DeleteFunc: func(e predicate.DeleteEvent) bool { return !e.DeleteStateUnknown }})
	d1 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: 1}}
	d1status := d1.DeepCopy()
	d1status.Status.Replicas = 3
	d2 := d1.DeepCopy()
	d2.Generation = 2
	h.OnUpdate(d1, d1status) // status only: dropped
	h.OnDelete(d1, true)     // inferred delete: dropped by the second predicate
	if n := q.Len(); n != 0 {
		t.Fatalf("filtered events queued %d items", n)
	}
	h.OnUpdate(d1, d2)
	h.OnDelete(d1, false)
	if got := drain(q); !equal(got, []reconcile.Request{req("ns", "web")}) {
		t.Fatalf("got %v", got)
	}
}

func owned(ns string, refs ...metav1.OwnerReference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", OwnerReferences: refs}}
}

func TestOwnerMapping(t *testing.T) {
	cmRef := func(name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: types.UID(name), Controller: ptr.To(controller)}
	}
	depRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Controller: ptr.To(true)}
	cmGK := corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind()
	s := owned("ns", cmRef("plain", false), cmRef("boss", true), depRef)

	if got := handler.ControllerOwner[*corev1.Secret](cmGK, true)(s); !equal(got, []reconcile.Request{req("ns", "boss")}) {
		t.Fatalf("ControllerOwner = %v", got)
	}
	if got := handler.Owner[*corev1.Secret](cmGK, true)(s); !equal(got, []reconcile.Request{req("ns", "plain"), req("ns", "boss")}) {
		t.Fatalf("Owner = %v", got)
	}
	// A version change of the owner does not matter; the group does.
	depGK := appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind()
	s2 := owned("ns", metav1.OwnerReference{APIVersion: "apps/v1beta2", Kind: "Deployment", Name: "old", Controller: ptr.To(true)})
	if got := handler.ControllerOwner[*corev1.Secret](depGK, true)(s2); !equal(got, []reconcile.Request{req("ns", "old")}) {
		t.Fatalf("other version = %v", got)
	}
	s3 := owned("ns", metav1.OwnerReference{APIVersion: "extensions/v1beta1", Kind: "Deployment", Name: "x", Controller: ptr.To(true)})
	if got := handler.ControllerOwner[*corev1.Secret](depGK, true)(s3); len(got) != 0 {
		t.Fatalf("other group mapped: %v", got)
	}
	// Cluster-scoped owners have no namespace.
	nodeGK := corev1.SchemeGroupVersion.WithKind("Node").GroupKind()
	s4 := owned("ns", metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n1", Controller: ptr.To(true)})
	if got := handler.ControllerOwner[*corev1.Secret](nodeGK, false)(s4); !equal(got, []reconcile.Request{req("", "n1")}) {
		t.Fatalf("cluster owner = %v", got)
	}
}

func TestUpdateEnqueuesOldAndNewOwner(t *testing.T) {
	q := workqueue.New[reconcile.Request]()
	defer q.ShutDown()
	gk := corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind()
	h := handler.New(q, handler.ControllerOwner[*corev1.Secret](gk, true))
	ref := func(n string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: n, Controller: ptr.To(true)}
	}
	h.OnUpdate(owned("ns", ref("a")), owned("ns", ref("b")))
	h.OnUpdate(owned("ns", ref("c")), owned("ns", ref("c")))
	h.OnAdd(owned("ns"), false) // no owner: nothing
	if got := drain(q); !equal(got, []reconcile.Request{req("ns", "a"), req("ns", "b"), req("ns", "c")}) {
		t.Fatalf("got %v", got)
	}
}
