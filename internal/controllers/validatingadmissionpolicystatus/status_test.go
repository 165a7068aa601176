package validatingadmissionpolicystatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/validatingadmissionpolicystatus"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestTypeChecking: the status the controller writes for a policy with
// type errors against ConfigMaps, Secrets and Deployments is the one
// kube-controller-manager v1.37.2 wrote for the same policy
// (testdata/reference-status.json, recorded from the reference); a
// policy without errors gets an empty typeChecking; a new generation is
// checked again (its warnings dropped, as the reference drops them).
func TestTypeChecking(t *testing.T) {
	env := ctrltest.Start(t, func(e *ctrltest.Env) error { return validatingadmissionpolicystatus.Add(e.Mgr) })
	ctx := context.Background()
	pols := rest.For[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyList](
		env.Client, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"), false)

	var p admissionregistrationv1.ValidatingAdmissionPolicy
	b, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatal(err)
	}
	var want admissionregistrationv1.ValidatingAdmissionPolicyStatus
	b, err = os.ReadFile("testdata/reference-status.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if _, err := pols.Create(ctx, &p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := func(name string, want admissionregistrationv1.ValidatingAdmissionPolicyStatus) func() error {
		return func() error {
			got, err := pols.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got.Status, want) {
				g, _ := json.MarshalIndent(got.Status, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				return fmt.Errorf("status\n got %s\nwant %s", g, w)
			}
			return nil
		}
	}
	env.Eventually("type checked as the reference", status(p.Name, want))

	cur, err := pols.Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "object.metadata.name.size() > 1"}}
	if _, err := pols.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// As on the reference, the warnings are dropped with typeChecking.
	env.Eventually("generation 2 checked", status(p.Name, admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 2}))

	clean := p.DeepCopy()
	clean.ObjectMeta = metav1.ObjectMeta{Name: "clean"}
	clean.Spec.Validations = cur.Spec.Validations
	if _, err := pols.Create(ctx, clean, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("clean policy checked", status("clean", admissionregistrationv1.ValidatingAdmissionPolicyStatus{
		ObservedGeneration: 1, TypeChecking: &admissionregistrationv1.TypeChecking{}}))
}
