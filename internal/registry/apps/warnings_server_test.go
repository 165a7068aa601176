package apps_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// patchWarnings sends a create (POST) or a merge patch and fails the test
// unless the answer's code is want; it returns the answer's warnings.
func patchWarnings(t *testing.T, s *testserver.Server, method, path, body string, want int) []string {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	code, out, h := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	var msgs []string
	for _, v := range h.Values("Warning") {
		msg, err := strconv.Unquote(strings.TrimPrefix(v, "299 - "))
		if err != nil {
			t.Fatalf("warning %q: %v", v, err)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

func wantWarnings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: warnings\n%q\nwant\n%q", what, got, want)
	}
}

const (
	oldOSLabel = `spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`
	negGrace   = "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
)

// TestDeploymentWarningsServed: a deployment warns of its name and its
// template on create; on update, of the whole template when the update
// moves the generation (its spec or its annotations change), of nothing
// otherwise.
func TestDeploymentWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const deps = "/apis/apps/v1/namespaces/default/deployments"
	got := patchWarnings(t, s, http.MethodPost, deps, `{"metadata":{"name":"web.1"},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"a"}},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	wantWarnings(t, "create", got,
		"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
		oldOSLabel)
	got = patchWarnings(t, s, http.MethodPatch, deps+"/web.1", `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}`, http.StatusOK)
	wantWarnings(t, "template change", got, oldOSLabel, negGrace)
	got = patchWarnings(t, s, http.MethodPatch, deps+"/web.1", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	wantWarnings(t, "labels", got)
	got = patchWarnings(t, s, http.MethodPatch, deps+"/web.1", `{"metadata":{"annotations":{"a":"b"}}}`, http.StatusOK)
	wantWarnings(t, "annotations", got, oldOSLabel, negGrace)
}

// TestDaemonSetWarningsServed: a daemon set's update warns only when it
// changes the template (and moves the template generation).
func TestDaemonSetWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const dss = "/apis/apps/v1/namespaces/default/daemonsets"
	got := patchWarnings(t, s, http.MethodPost, dss, `{"metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"app":"a"}},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	wantWarnings(t, "create", got, oldOSLabel)
	got = patchWarnings(t, s, http.MethodPatch, dss+"/ds", `{"spec":{"minReadySeconds":5}}`, http.StatusOK)
	wantWarnings(t, "spec change outside the template", got)
	got = patchWarnings(t, s, http.MethodPatch, dss+"/ds", `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}`, http.StatusOK)
	wantWarnings(t, "template change", got, oldOSLabel, negGrace)
}
