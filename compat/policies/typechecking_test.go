package policies

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// typeCheckPolicy has type errors against ConfigMaps, Secrets and
// Deployments in an expression, a messageExpression and an expression
// using a variable and params.
const typeCheckPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"policies-diff-typecheck"},"spec":{
	"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},
	"variables":[{"name":"nm","expression":"object.metadata.name"}],
	"matchConstraints":{"namespaceSelector":{"matchLabels":{"setpoint-helper":"policies"}},"resourceRules":[
		{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps","secrets"]},
		{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},
	"validations":[
		{"expression":"object.spec.replicas > 1"},
		{"expression":"variables.nm.size() < 3 && params.data.x == 'y'","messageExpression":"object.data + 'x'"},
		{"expression":"object.metadata.name.size() > 0 && object.metadata.labels.foo == 1"},
		{"expression":"has(object.metadata.labels) && params.data.missing == 1"}]}}`

// TestTypeChecking compares status.typeChecking and observedGeneration,
// written by kube-controller-manager's and setpoint's controllers.
func TestTypeChecking(t *testing.T) {
	ref, sp := sides(t, testenv.Options{Controllers: true})
	const path = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	var got [2]any
	for i, s := range []*difftest.Side{ref, sp} {
		send(t, s, "DELETE", path+"/policies-diff-typecheck", "")
		t.Cleanup(func() { send(t, s, "DELETE", path+"/policies-diff-typecheck", "") })
		if r := send(t, s, "POST", path, typeCheckPolicy); r.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", s.Name, r.Code, r.Body)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			var p struct {
				Status map[string]any `json:"status"`
			}
			_ = json.Unmarshal(send(t, s, "GET", path+"/policies-diff-typecheck", "").Body, &p)
			if fmt.Sprint(p.Status["observedGeneration"]) == "1" {
				got[i] = p.Status
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not type checked: %v", s.Name, p.Status)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		r, _ := json.MarshalIndent(got[0], "", " ")
		s, _ := json.MarshalIndent(got[1], "", " ")
		t.Errorf("status differs:\nreference %s\nsetpoint  %s", r, s)
	}
}
