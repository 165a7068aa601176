package admissionregistration

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest"
)

func newVWC() *admissionv1.ValidatingWebhookConfiguration {
	return &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "vwc", ResourceVersion: "3"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "check.example.com", SideEffects: new(admissionv1.SideEffectClassNone),
			ClientConfig:            admissionv1.WebhookClientConfig{URL: new("https://example.com/check")},
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         []admissionv1.MatchCondition{{Name: "ok", Expression: "request.operation == 'CREATE'"}},
		}},
	}
}

func TestWebhookDefaultsIdempotent(t *testing.T) {
	r := registrytest.Find(t, Resources(), "validatingwebhookconfigurations")
	c := newVWC()
	registrytest.ExpectValid(t, registrytest.Create(r, c))
	again := c.DeepCopy()
	r.Strategy.Default(again)
	if !semanticEqual(c, again) {
		t.Errorf("defaults changed a defaulted object")
	}
	registrytest.ExpectFields(t, r, c, fields.Set{"metadata.name": "vwc", "metadata.namespace": ""})
}

// An update keeps what kube-apiserver lets stored objects keep: side
// effects that new objects may not declare, and match conditions that no
// longer compile.
func TestWebhookUpdateRelaxations(t *testing.T) {
	r := registrytest.Find(t, Resources(), "validatingwebhookconfigurations")
	old := newVWC()
	r.Strategy.Default(old)
	old.Webhooks[0].SideEffects = new(admissionv1.SideEffectClassSome)
	old.Webhooks[0].MatchConditions[0].Expression = "request.nope"
	upd := old.DeepCopy()
	upd.Webhooks[0].TimeoutSeconds = new(int32(5))
	registrytest.ExpectValid(t, registrytest.Update(r, upd, old))

	// A new webhook makes the match conditions checked again.
	upd.Webhooks = append(upd.Webhooks, *newVWC().Webhooks[0].DeepCopy())
	upd.Webhooks[1].Name = "other.example.com"
	registrytest.ExpectErrors(t, registrytest.Update(r, upd, old), "webhooks[0].matchConditions[0].expression:FieldValueInvalid")

	// With a webhook whose side effects are fine, Some is refused.
	old.Webhooks[0].SideEffects = new(admissionv1.SideEffectClassNone)
	old.Webhooks[0].MatchConditions = nil
	upd = old.DeepCopy()
	upd.Webhooks[0].SideEffects = new(admissionv1.SideEffectClassSome)
	registrytest.ExpectErrors(t, registrytest.Update(r, upd, old), "webhooks[0].sideEffects:FieldValueNotSupported")
}

func TestPolicyVariablesCompose(t *testing.T) {
	r := registrytest.Find(t, Resources(), "validatingadmissionpolicies")
	p := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{"CREATE"},
					Rule: admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Variables: []admissionv1.Variable{
				{Name: "replicas", Expression: "object.spec.replicas"},
				{Name: "big", Expression: "variables.replicas > 5"},
			},
			Validations: []admissionv1.Validation{{Expression: "!variables.big", MessageExpression: "'too many: ' + string(variables.replicas)"}},
		},
	}
	registrytest.ExpectValid(t, registrytest.Create(r, p))
	// variables.big is a bool: using it as a number does not type-check.
	p.Spec.Validations[0].Expression = "variables.big + 1 > 2"
	registrytest.ExpectErrors(t, registrytest.Create(r, p), "spec.validations[0].expression:FieldValueInvalid")
}

func BenchmarkValidatePolicy(b *testing.B) {
	r := registrytest.Find(b, Resources(), "validatingadmissionpolicies")
	p := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{"CREATE"},
					Rule: admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Validations: []admissionv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}
	r.Strategy.Default(p)
	for b.Loop() {
		if errs := r.Strategy.Validate(p); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
