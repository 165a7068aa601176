package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestReviewAsTableIsNotAcceptable: a review (whose storage renders no
// Table in kube-apiserver) asked for as a meta.k8s.io Table is a 406, as the
// conformance spec "should return a 406 for a backend which does not
// implement metadata" expects; the same review as JSON is answered.
func TestReviewAsTableIsNotAcceptable(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	const body = `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	code, out, _ := doRequest(t, s, req)
	if code != http.StatusNotAcceptable || !strings.Contains(string(out), `"reason":"NotAcceptable"`) {
		t.Errorf("as Table: %d %s, want a 406 NotAcceptable Status", code, out)
	}
	code, out, _ = do(t, s, http.MethodPost, path, "application/json", body)
	if code != http.StatusCreated || !strings.Contains(string(out), `"allowed":true`) {
		t.Errorf("as JSON: %d %s, want 201 allowed", code, out)
	}
}
