package apiserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// statusDefaultCRD has the status subresource and a default status, as
// Gateway API's Gateway and GatewayClass do.
const statusDefaultCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "lamps.example.com"},
 "spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "lamps", "singular": "lamp", "kind": "Lamp"},
  "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {"on": {"type": "boolean"}}},
    "status": {"type": "object", "default": {"conditions": [{"type": "Accepted", "status": "Unknown"}]},
     "properties": {"conditions": {"type": "array", "items": {"type": "object", "properties": {
      "type": {"type": "string"}, "status": {"type": "string"}, "reason": {"type": "string", "default": "Pending"}}}}}}}}}}]}}`

// TestCRDDefaultStatus: with the status subresource, the status a create
// (or an update of the main resource) drops is replaced by the schema's
// default status, in the answer and in what is stored, as kube-apiserver
// shows it (it defaults objects read from storage).
func TestCRDDefaultStatus(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", statusDefaultCRD); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	lamps := "/apis/example.com/v1/namespaces/default/lamps"
	waitFor(t, "lamps served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, lamps, "", "")
		return code == http.StatusOK
	})
	want := map[string]any{"conditions": []any{map[string]any{"type": "Accepted", "status": "Unknown", "reason": "Pending"}}}
	status := func(body []byte) any {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		return obj["status"]
	}
	code, body, _ := do(t, s, http.MethodPost, lamps, "application/json",
		`{"apiVersion": "example.com/v1", "kind": "Lamp", "metadata": {"name": "a"}, "spec": {"on": true}, "status": {"conditions": []}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if got := status(body); !reflect.DeepEqual(got, want) {
		t.Errorf("create answer status = %v, want %v", got, want)
	}
	_, body, _ = do(t, s, http.MethodGet, lamps+"/a", "", "")
	if got := status(body); !reflect.DeepEqual(got, want) {
		t.Errorf("stored status = %v, want %v", got, want)
	}
	code, body, _ = do(t, s, http.MethodPatch, lamps+"/a", "application/merge-patch+json", `{"spec": {"on": false}, "status": {"conditions": null}}`)
	if code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, body)
	}
	if got := status(body); !reflect.DeepEqual(got, want) {
		t.Errorf("status after an update of the main resource = %v, want %v", got, want)
	}
}
