package core_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestDeprecationWarningRouted: a deprecated resource warns on the
// requests its handler serves, not on a PATCH its route refuses for the
// media type (kube-apiserver's router answers that 415 itself).
func TestDeprecationWarningRouted(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const eps = "/api/v1/namespaces/default/endpoints"
	const warning = `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`
	code, out, h := s.Do(t, http.MethodPost, eps, "application/json", strings.NewReader(`{"metadata":{"name":"web"}}`))
	if code != http.StatusCreated || h.Get("Warning") != warning {
		t.Fatalf("create: %d %s, warning %q", code, out, h.Get("Warning"))
	}
	code, _, h = s.Do(t, http.MethodPatch, eps+"/web", "application/json", strings.NewReader(`{"metadata":{"labels":{"a":"b"}}}`))
	if code != http.StatusUnsupportedMediaType || len(h.Values("Warning")) != 0 {
		t.Errorf("patch as application/json: %d, warnings %q", code, h.Values("Warning"))
	}
	code, _, h = s.Do(t, http.MethodPatch, eps+"/web", "application/merge-patch+json", strings.NewReader(`{"metadata":{"labels":{"a":"b"}}}`))
	if code != http.StatusOK || h.Get("Warning") != warning {
		t.Errorf("merge patch: %d, warning %q", code, h.Get("Warning"))
	}
}

// TestNamespacePreconditionWording: kube-apiserver's namespace storage
// checks delete preconditions itself and words the 409 its own way.
func TestNamespacePreconditionWording(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	if code, out, _ := s.Do(t, http.MethodPost, "/api/v1/namespaces", "application/json", strings.NewReader(`{"metadata":{"name":"team"}}`)); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, out)
	}
	code, out, _ := s.Do(t, http.MethodDelete, "/api/v1/namespaces/team", "application/json", strings.NewReader(`{"preconditions":{"resourceVersion":"1"}}`))
	var st metav1.Status
	if err := json.Unmarshal(out, &st); err != nil || code != http.StatusConflict || st.Details == nil || st.Details.Kind != "namespaces" ||
		!strings.HasPrefix(st.Message, `Operation cannot be fulfilled on namespaces "team": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: `) {
		t.Errorf("delete with a stale resourceVersion: %d %s", code, out)
	}
	if code, _, _ := s.Do(t, http.MethodGet, "/api/v1/namespaces/team", "", nil); code != http.StatusOK {
		t.Errorf("the namespace is gone after a refused delete (%d)", code)
	}
}
