package policy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestUpdateNeedsResourceVersion: kube-apiserver refuses a PUT of a
// budget that names no resourceVersion (its strategy allows no
// unconditional update); a PUT naming one and a patch go through.
func TestUpdateNeedsResourceVersion(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
	do := func(method, path, ctype, body string, want int) []byte {
		t.Helper()
		code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
		if code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
		}
		return out
	}
	do(http.MethodPost, pdbs, "application/json", `{"metadata":{"name":"p"},"spec":{"minAvailable":1}}`, 201)
	before := do(http.MethodGet, pdbs+"/p", "", "", 200)
	out := do(http.MethodPut, pdbs+"/p", "application/json", `{"metadata":{"name":"p"},"spec":{"minAvailable":2}}`, 422)
	var st struct {
		Message string
		Details struct {
			Kind   string
			Causes []struct{ Field, Reason, Message string }
		}
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver v1.37.2's answer.
	if st.Message != `poddisruptionbudgets.policy "p" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update` ||
		st.Details.Kind != "poddisruptionbudgets" || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "metadata.resourceVersion" {
		t.Errorf("answer: %s", out)
	}
	if after := do(http.MethodGet, pdbs+"/p", "", "", 200); string(after) != string(before) {
		t.Errorf("refused update changed the budget:\n%s\n%s", before, after)
	}
	do(http.MethodPatch, pdbs+"/p", "application/merge-patch+json", `{"spec":{"minAvailable":3}}`, 200)
	var cur struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal(do(http.MethodGet, pdbs+"/p", "", "", 200), &cur); err != nil {
		t.Fatal(err)
	}
	do(http.MethodPut, pdbs+"/p", "application/json",
		`{"metadata":{"name":"p","resourceVersion":"`+cur.Metadata.ResourceVersion+`"},"spec":{"minAvailable":4}}`, 200)
	do(http.MethodPut, pdbs+"/missing", "application/json", `{"metadata":{"name":"missing"},"spec":{}}`, 404)
}
