package podsecurity_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestDefaultChainRunsPodSecurity: a server with kube-apiserver's default
// admission chain runs PodSecurity with the default configuration (the
// other tests wire their own plugin in its place): a namespace labelled
// enforce=restricted refuses a privileged pod, the pod is not stored, and
// the evaluation is counted on the server's /metrics.
func TestDefaultChainRunsPodSecurity(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	namespace(t, s, "chain", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox",
		"securityContext":{"privileged":true}}]}}`
	code, body := s.Do(t, http.MethodPost, "/api/v1/namespaces/chain/pods", pod)
	if code != http.StatusForbidden || !strings.Contains(string(body), `violates PodSecurity \"restricted:latest\": privileged (container \"c\" must not set securityContext.privileged=true)`) {
		t.Fatalf("privileged pod in a restricted namespace: %d %s", code, body)
	}
	s.Must(t, http.MethodGet, "/api/v1/namespaces/chain/pods/p", "", http.StatusNotFound, nil)
	code, body = s.Do(t, http.MethodGet, "/metrics", "")
	if code != http.StatusOK || !strings.Contains(string(body), `pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`) {
		t.Errorf("/metrics does not count the refusal: %d\n%s", code, grepLines(string(body), "pod_security_evaluations_total"))
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
