package strategy

import (
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func causes(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+":"+string(e.Type))
	}
	return out
}

// TestFinalizerNames: the core rules refuse an unqualified finalizer name
// that is not a standard one, after apimachinery's own check (which names
// the list); the generic rules do not.
func TestFinalizerNames(t *testing.T) {
	m := &metav1.ObjectMeta{Name: "a", Finalizers: []string{"kubernetes", "orphan", "example.com/x", "foregroundDeletion-ish", "plain"}}
	if got := causes(ValidateMeta(m, false, apivalidation.NameIsDNSSubdomain)); len(got) != 2 || got[0] != "metadata.finalizers[3]:FieldValueInvalid" || got[1] != "metadata.finalizers[4]:FieldValueInvalid" {
		t.Errorf("ValidateMeta causes %v", got)
	}
	if got := causes(ValidateGenericMeta(m, false, apivalidation.NameIsDNSSubdomain)); len(got) != 0 {
		t.Errorf("ValidateGenericMeta causes %v", got)
	}
	// After apimachinery's check of the list, as kube-apiserver.
	m.Finalizers = []string{"bad finalizer"}
	got := causes(ValidateMeta(m, false, apivalidation.NameIsDNSSubdomain))
	if len(got) < 2 || got[0] != "metadata.finalizers:FieldValueInvalid" || got[len(got)-1] != "metadata.finalizers[0]:FieldValueInvalid" {
		t.Errorf("ValidateMeta causes %v", got)
	}
	old := &metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}
	upd := &metav1.ObjectMeta{Name: "a", ResourceVersion: "1", Finalizers: []string{"plain"}}
	if got := causes(ValidateMetaUpdate(upd, old)); len(got) != 1 || got[0] != "metadata.finalizers[0]:FieldValueInvalid" {
		t.Errorf("ValidateMetaUpdate causes %v", got)
	}
	if got := causes(ValidateGenericMetaUpdate(upd, old)); len(got) != 0 {
		t.Errorf("ValidateGenericMetaUpdate causes %v", got)
	}
}
