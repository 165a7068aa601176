package validatingadmissionpolicy_test

import (
	"fmt"
	"testing"
)

const hpaV1 = `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q,"labels":{"t":"equivalent"}},
	"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":%d}}`

// TestMatchPolicyEquivalent: a policy of autoscaling/v2 HPAs (matchPolicy
// Equivalent, the default) judges a write at autoscaling/v1 on the object
// converted to v2 — its expression reads spec.metrics, which v1 does not
// have — and names the kinds as kube-apiserver does; with Exact it is not
// applied to v1 writes.
func TestMatchPolicyEquivalent(t *testing.T) {
	s := setup(t)
	rules := `"resourceRules":[{"apiGroups":["autoscaling"],"apiVersions":["v2"],"operations":["CREATE"],"resources":["horizontalpodautoscalers"]}]`
	spec := func(policy string) string {
		return fmt.Sprintf(`"matchConstraints":{"matchPolicy":%q,"namespaceSelector":{"matchLabels":{"policies":"on"}},"objectSelector":{"matchLabels":{"t":"equivalent"}},%s},
			"validations":[{"expression":"object.spec.metrics[0].resource.target.averageUtilization <= 80 && request.kind.version == 'v2' && request.requestKind.version == 'v1'","messageExpression":"'at most 80 percent, got ' + string(object.spec.metrics[0].resource.target.averageUtilization)"}]`, policy, rules)
	}
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"eq"},"spec":{%s}}`, spec("Equivalent")))
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", binding("eq-b", "eq", `"validationActions":["Deny"]`))
	path := "/apis/autoscaling/v1/namespaces/vap/horizontalpodautoscalers"
	refused(t, s, "POST", path, path+"/hot", fmt.Sprintf(hpaV1, "hot", 95), 422, "Invalid",
		`horizontalpodautoscalers.autoscaling "hot" is forbidden: ValidatingAdmissionPolicy 'eq' with binding 'eq-b' denied request: at most 80 percent, got 95`)
	mustDo(t, s, "POST", path, fmt.Sprintf(hpaV1, "cool", 50))

	// Exact: the same policy no longer sees v1 writes.
	mustDo(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/eq-b", "")
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
		fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"exact"},"spec":{%s}}`, spec("Exact")))
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", binding("exact-b", "exact", `"validationActions":["Deny"]`))
	// Seen at v2 (so the policy is active), then not applied at v1.
	v2 := "/apis/autoscaling/v2/namespaces/vap/horizontalpodautoscalers"
	eventually(t, func() error {
		code, m, _ := do(t, s, "POST", v2+"?dryRun=All", `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"probe","labels":{"t":"equivalent"}},
			"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":95}}}]}}`)
		if code != 422 {
			return fmt.Errorf("v2 write under Exact: %d %v", code, m["message"])
		}
		return nil
	})
	if code, m, _ := do(t, s, "POST", path, fmt.Sprintf(hpaV1, "hot2", 95)); code != 201 {
		t.Fatalf("a v1 write under an Exact policy of v2: %d %v", code, m["message"])
	}
}
