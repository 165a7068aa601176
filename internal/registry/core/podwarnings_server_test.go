package core_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// warningTexts are the messages of an answer's Warning headers, in order.
func warningTexts(t *testing.T, h http.Header) []string {
	t.Helper()
	var out []string
	for _, v := range h.Values("Warning") {
		msg, err := strconv.Unquote(strings.TrimPrefix(v, "299 - "))
		if err != nil {
			t.Fatalf("warning %q: %v", v, err)
		}
		out = append(out, msg)
	}
	return out
}

// sendWarned sends body and fails the test unless the answer's code is want; it
// returns the answer's warnings.
func sendWarned(t *testing.T, s *testserver.Server, method, path, body string, want int) []string {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	code, out, h := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return warningTexts(t, h)
}

func wantWarnings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: warnings\n%q\nwant\n%q", what, got, want)
	}
}

const oldOSLabel = `spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`

// TestPodWarningsServed: a pod's create answers with the warnings of its
// spec, also when the validating admission then refuses it (a LimitRange
// here), as kube-apiserver sends them before that admission; its update
// answers with none.
func TestPodWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const pods = "/api/v1/namespaces/default/pods"
	pod := `{"metadata":{"name":"web"},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},
		"containers":[{"name":"c","image":"busybox","resources":{"requests":{"memory":"1500m"}}}]}}`
	got := sendWarned(t, s, http.MethodPost, pods, pod, http.StatusCreated)
	wantWarnings(t, "create", got, oldOSLabel,
		`spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`)
	got = sendWarned(t, s, http.MethodPatch, pods+"/web", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	wantWarnings(t, "update", got)

	sendWarned(t, s, http.MethodPost, "/api/v1/namespaces/default/limitranges",
		`{"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1"}}]}}`, http.StatusCreated)
	refused := `{"metadata":{"name":"big"},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},
		"containers":[{"name":"c","image":"busybox","resources":{"limits":{"cpu":"2"}}}]}}`
	got = sendWarned(t, s, http.MethodPost, pods, refused, http.StatusForbidden)
	wantWarnings(t, "create refused by a LimitRange", got, oldOSLabel)
}

// TestPodTemplateWarningsServed: a pod template warns on create and on an
// update that changes the template (of the whole template), not on one
// that changes its labels only.
func TestPodTemplateWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const pts = "/api/v1/namespaces/default/podtemplates"
	got := sendWarned(t, s, http.MethodPost, pts, `{"metadata":{"name":"t"},"template":{"spec":{
		"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}`, http.StatusCreated)
	wantWarnings(t, "create", got, "template."+oldOSLabel)
	got = sendWarned(t, s, http.MethodPatch, pts+"/t", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	wantWarnings(t, "labels", got)
	got = sendWarned(t, s, http.MethodPatch, pts+"/t", `{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}`, http.StatusOK)
	wantWarnings(t, "template change", got, "template."+oldOSLabel,
		"template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1")
}

// TestReplicationControllerWarningsServed: a replication controller's
// update that changes its spec warns of the template as it was before the
// update, as kube-apiserver v1.37 does.
func TestReplicationControllerWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const rcs = "/api/v1/namespaces/default/replicationcontrollers"
	got := sendWarned(t, s, http.MethodPost, rcs, `{"metadata":{"name":"rc"},"spec":{"replicas":0,"selector":{"app":"a"},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	wantWarnings(t, "create", got, "spec.template."+oldOSLabel)
	got = sendWarned(t, s, http.MethodPatch, rcs+"/rc", `{"spec":{"template":{"spec":{"nodeSelector":null}}}}`, http.StatusOK)
	wantWarnings(t, "update dropping the label", got, "spec.template."+oldOSLabel)
	got = sendWarned(t, s, http.MethodPatch, rcs+"/rc", `{"spec":{"replicas":1}}`, http.StatusOK)
	wantWarnings(t, "update after it", got)
}
