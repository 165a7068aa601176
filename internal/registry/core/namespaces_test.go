package core

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func storedNamespace(t *testing.T) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", ResourceVersion: "1"}}
	ns.Status.Phase = corev1.NamespaceTerminating // reset on create
	expectValid(t, create(lookup(t, "namespaces"), ns))
	return ns
}

func TestNamespaceCreate(t *testing.T) {
	ns := storedNamespace(t)
	if ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("phase %s, want Active", ns.Status.Phase)
	}
	if !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) {
		t.Errorf("finalizers %v", ns.Spec.Finalizers)
	}
	if ns.Labels[corev1.LabelMetadataName] != "team-a" {
		t.Errorf("labels %v", ns.Labels)
	}
	expectFields(t, lookup(t, "namespaces"), ns, fields.Set{"metadata.name": "team-a", "status.phase": "Active"})
}

func TestNamespaceValidation(t *testing.T) {
	r := lookup(t, "namespaces")
	for name, c := range map[string]struct {
		ns   *corev1.Namespace
		want []string
	}{
		"dotted name": {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}},
			[]string{"metadata.name:FieldValueInvalid"}},
		"upper name": {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Team"}},
			[]string{"metadata.name:FieldValueInvalid"}},
		"namespaced": {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}},
			[]string{"metadata.namespace:FieldValueForbidden"}},
		"bad spec finalizer": {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"custom"}}},
			[]string{"spec.finalizers:FieldValueInvalid"}},
		"qualified spec finalizer": {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/cleanup"}}}, nil},
	} {
		t.Run(name, func(t *testing.T) { expectErrors(t, create(r, c.ns), c.want...) })
	}
}

func TestNamespaceUpdates(t *testing.T) {
	r := lookup(t, "namespaces")
	old := storedNamespace(t)

	ns := old.DeepCopy()
	ns.Spec.Finalizers = nil
	ns.Status.Phase = corev1.NamespaceTerminating
	ns.Labels["team"] = "a"
	expectValid(t, update(r, ns, old))
	if len(ns.Spec.Finalizers) != 1 || ns.Status.Phase != corev1.NamespaceActive || ns.Labels["team"] != "a" {
		t.Errorf("main update: finalizers %v phase %s labels %v", ns.Spec.Finalizers, ns.Status.Phase, ns.Labels)
	}

	ns = old.DeepCopy()
	ns.Status.Phase = corev1.NamespaceTerminating
	expectErrors(t, updateStatus(r, ns, old), "status.Phase:FieldValueInvalid")
	ns = old.DeepCopy()
	deleted := metav1.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ns.DeletionTimestamp, old.DeletionTimestamp = &deleted, &deleted
	ns.Status.Phase = corev1.NamespaceTerminating
	expectValid(t, updateStatus(r, ns, old))
}

func TestNamespaceDeletion(t *testing.T) {
	r := lookup(t, "namespaces")
	holder := r.Strategy.(registry.DeletionHolder)
	ns := storedNamespace(t)
	holder.PrepareForDelete(ns)
	if ns.Status.Phase != corev1.NamespaceTerminating || !holder.HoldsDeletion(ns) {
		t.Fatalf("phase %s holds %v", ns.Status.Phase, holder.HoldsDeletion(ns))
	}

	fin := NamespaceFinalize()
	emptied := ns.DeepCopy()
	emptied.Spec.Finalizers = nil
	emptied.Labels = map[string]string{"ignored": "yes"}
	emptied.ResourceVersion = ""
	fin.PrepareForUpdate(emptied, ns)
	expectValid(t, fin.ValidateUpdate(emptied, ns))
	if holder.HoldsDeletion(emptied) || emptied.Labels["ignored"] != "" || emptied.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("finalize: %+v", emptied)
	}
	bad := ns.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"nope"}
	fin.PrepareForUpdate(bad, ns)
	expectErrors(t, fin.ValidateUpdate(bad, ns), "spec.finalizers:FieldValueInvalid")
}
