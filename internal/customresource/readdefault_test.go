package customresource_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// TestDefaultsAppliedOnRead: a default added to a CRD's schema after an
// object was stored shows on that object from then on, on a get and in a
// list, as kube-apiserver defaults custom objects read from storage (the
// conformance spec "custom resource defaulting for requests and from
// storage works"); the stored value itself is not rewritten.
func TestDefaultsAppliedOnRead(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"dials.example.com"},
	 "spec":{"group":"example.com","scope":"Cluster","names":{"plural":"dials","singular":"dial","kind":"Dial"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
	   "a":{"type":"string"},"b":{"type":"string"}}}}}]}}`
	must(t, s, http.MethodPost, crdPath, "application/json", crd, http.StatusCreated)
	dials := "/apis/example.com/v1/dials"
	eventually(t, "dials served", func() bool {
		code, _, _ := s.Do(t, http.MethodGet, dials, "", nil)
		return code == http.StatusOK
	})
	must(t, s, http.MethodPost, dials, "application/json", `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"one"}}`, http.StatusCreated)
	must(t, s, http.MethodPatch, crdPath+"/dials.example.com", "application/json-patch+json",
		`[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/a/default","value":"A"}]`, http.StatusOK)

	eventually(t, "the new default on a get", func() bool {
		var obj map[string]any
		decode(t, must(t, s, http.MethodGet, dials+"/one", "", "", http.StatusOK), &obj)
		return obj["a"] == "A"
	})
	var list struct{ Items []map[string]any }
	decode(t, must(t, s, http.MethodGet, dials, "", "", http.StatusOK), &list)
	if len(list.Items) != 1 || list.Items[0]["a"] != "A" {
		t.Errorf("list items %v, want a defaulted to A", list.Items)
	}
	// A write answers and keeps the default; b, without one, stays unset.
	var patched map[string]any
	decode(t, must(t, s, http.MethodPatch, dials+"/one", "application/merge-patch+json", `{"metadata":{"labels":{"x":"y"}}}`, http.StatusOK), &patched)
	if patched["a"] != "A" || patched["b"] != nil {
		t.Errorf("patched object %v, want a=A and no b", patched)
	}
}

func must(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int) []byte {
	t.Helper()
	code, b, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 100*time.Millisecond, what, testwait.Bool(cond))
}
