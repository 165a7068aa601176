package controllerref_test

import (
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
)

func TestControllerUIDIndex(t *testing.T) {
	idx := cache.NewObjectIndexer[*corev1.Pod](nil)
	owner := &metav1.ObjectMeta{Namespace: "a", Name: "rs", UID: "u1"}
	add := func(ns, name string, refs ...metav1.OwnerReference) {
		if err := idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs}}); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "owned", ctrlRef("rs", "u1"))
	add("a", "orphan")
	add("b", "orphan-elsewhere")
	add("a", "other", ctrlRef("rs2", "u2"))
	add("a", "non-controller-ref", metav1.OwnerReference{Name: "rs", UID: "u1"})
	// Installed after objects exist, twice: idempotent.
	for range 2 {
		if err := controllerref.AddControllerUIDIndex(idx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := controllerref.Candidates(idx, owner)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	if len(names) != 3 || names[0] != "non-controller-ref" || names[1] != "orphan" || names[2] != "owned" {
		t.Fatalf("candidates %v", names)
	}
}
