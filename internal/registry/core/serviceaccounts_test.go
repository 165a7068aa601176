package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func TestServiceAccount(t *testing.T) {
	r := lookup(t, "serviceaccounts")
	sa := &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "build", Namespace: "default", ResourceVersion: "3"},
		Secrets:    []corev1.ObjectReference{{Name: "s1", Namespace: "other", Kind: "Secret", UID: "u"}},
	}
	expectValid(t, create(r, sa))
	if got := sa.Secrets[0]; got != (corev1.ObjectReference{Name: "s1"}) {
		t.Errorf("secret reference kept %+v, want the name only", got)
	}
	bad := sa.DeepCopy()
	bad.Name = "Build"
	expectErrors(t, create(r, bad), "metadata.name:FieldValueInvalid")

	upd := sa.DeepCopy()
	upd.Secrets = []corev1.ObjectReference{{Name: "s2", APIVersion: "v1"}}
	expectValid(t, update(r, upd, sa))
	if upd.Secrets[0].APIVersion != "" {
		t.Errorf("update kept %+v", upd.Secrets[0])
	}
	expectFields(t, r, sa, fields.Set{"metadata.name": "build", "metadata.namespace": "default"})

	annotated := sa.DeepCopy()
	annotated.Annotations = map[string]string{enforceMountableSecrets: "true"}
	ws := r.Strategy.(registry.WarningsStrategy)
	want := "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
	if got := ws.WarningsOnCreate(annotated); len(got) != 1 || got[0] != want {
		t.Errorf("warnings on create %q", got)
	}
	if got := ws.WarningsOnUpdate(annotated, annotated); len(got) != 0 {
		t.Errorf("warnings when the annotation was there already: %q", got)
	}
}
