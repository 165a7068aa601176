package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
)

// TestProfiling: with Config.Profiling the runtime profiles are served to
// an identity allowed /debug/* (the admin) and refused to one that is not,
// in kube-apiserver's words; without it the paths are not found.
func TestProfiling(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.Profiling = true })
	admin := identity{s, s.Token}
	code, body, _ := admin.do(t, http.MethodGet, "/debug/pprof/goroutine?debug=1", "")
	if code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("admin, goroutine profile: %d %.200s", code, body)
	}
	code, body, _ = admin.do(t, http.MethodGet, "/debug/pprof/", "")
	if code != http.StatusOK || !strings.Contains(body, "heap") {
		t.Errorf("admin, index: %d %.200s", code, body)
	}
	sa := serviceAccount(t, s, "prof", "reader")
	code, body, _ = sa.do(t, http.MethodGet, "/debug/pprof/heap", "")
	if code != http.StatusForbidden || !strings.Contains(body, `forbidden: User \"system:serviceaccount:prof:reader\" cannot get path \"/debug/pprof/heap\"`) {
		t.Errorf("service account, heap profile: %d %s", code, body)
	}

	off, _ := start(t, nil)
	if code, body, _ := (identity{off, off.Token}).do(t, http.MethodGet, "/debug/pprof/heap", ""); code != http.StatusNotFound {
		t.Errorf("profiling off: %d %.200s", code, body)
	}
}
