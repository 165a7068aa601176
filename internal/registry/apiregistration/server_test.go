package apiregistration_test

import (
	"encoding/json"
	"net/http"
	"testing"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const base = "/apis/apiregistration.k8s.io/v1/apiservices"

// TestLocalAvailable checks what the recorded cases (testdata) leave out:
// a local APIService is available from its creation (the transition time
// is the creation time), and a status write cannot make it unavailable;
// kube-apiserver's availability controller restores the condition right
// after such a write, setpoint in the write itself.
func TestLocalAvailable(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	var local apiregv1.APIService
	s.Must(t, http.MethodPost, base, `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1.local.example.com"},
		"spec":{"group":"local.example.com","version":"v1","groupPriorityMinimum":100,"versionPriority":10},
		"status":{"conditions":[{"type":"Available","status":"False","reason":"Nope"}]}}`, 201, &local)
	want := apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: apiregv1.ConditionTrue, Reason: "Local",
		Message: "Local APIServices are always available", LastTransitionTime: local.CreationTimestamp}
	if c := local.Status.Conditions; len(c) != 1 || c[0] != want {
		t.Errorf("local conditions %+v, want %+v", c, want)
	}
	local.Status.Conditions = []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: apiregv1.ConditionFalse, Reason: "Down"}}
	body, err := json.Marshal(local)
	if err != nil {
		t.Fatal(err)
	}
	s.Must(t, http.MethodPut, base+"/v1.local.example.com/status", string(body), 200, &local)
	if c := local.Status.Conditions; len(c) != 1 || c[0].Status != apiregv1.ConditionTrue || c[0].Reason != "Local" {
		t.Errorf("local conditions after writing False: %+v", c)
	}
}
