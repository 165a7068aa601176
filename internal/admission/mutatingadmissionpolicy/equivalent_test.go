package mutatingadmissionpolicy_test

import (
	"fmt"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestMatchPolicyEquivalent: a mutating policy of autoscaling/v2 HPAs
// (matchPolicy Equivalent) mutates a write at autoscaling/v1 at v2 — it
// sets spec.behavior, which v1 cannot express — and the change reaches the
// stored object, read back at v2.
func TestMatchPolicyEquivalent(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"map"}}`)
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":"eq"},"spec":{
		"matchConstraints":{"objectSelector":{"matchLabels":{"t":"eq"}},"resourceRules":[{"apiGroups":["autoscaling"],"apiVersions":["v2"],"operations":["CREATE"],"resources":["horizontalpodautoscalers"]}]},
		"reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":
		"[JSONPatch{op: 'add', path: '/spec/behavior', value: {'scaleDown': {'stabilizationWindowSeconds': object.spec.metrics[0].resource.target.averageUtilization}}}, JSONPatch{op: 'add', path: '/metadata/labels/seen', value: request.kind.version + '-' + request.requestKind.version}]"}}]}}`)
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding","metadata":{"name":"eq-b"},"spec":{"policyName":"eq"}}`)
	hpa := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q,"labels":{"t":"eq"}},
			"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":61}}`, name)
	}
	path := "/apis/autoscaling/v1/namespaces/map/horizontalpodautoscalers"
	eventually(t, func() error {
		m := mustDo(t, s, "POST", path+"?dryRun=All", hpa("probe"))
		if m["metadata"].(map[string]any)["labels"].(map[string]any)["seen"] != "v2-v1" {
			return fmt.Errorf("not mutated at v2: %v", m["metadata"])
		}
		return nil
	})
	mustDo(t, s, "POST", path, hpa("web"))
	got := mustDo(t, s, "GET", "/apis/autoscaling/v2/namespaces/map/horizontalpodautoscalers/web", "")
	behavior, _ := got["spec"].(map[string]any)["behavior"].(map[string]any)
	down, _ := behavior["scaleDown"].(map[string]any)
	if down["stabilizationWindowSeconds"] != float64(61) {
		t.Fatalf("the v2 mutation did not reach the stored object: %v", got["spec"])
	}
}
