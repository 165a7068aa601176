package core_test

import (
	"net/http"
	"strings"
	"testing"

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
