package batch_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// sendWarned sends a create (POST) or a merge patch and fails the test
// unless the answer's code is want; it returns the answer's warnings.
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

// TestCronJobWarningsServed: a cron job warns of its job template's pod
// template at spec.jobTemplate.spec.template, on create and on an update
// of its spec; not on one of its labels.
func TestCronJobWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const cjs = "/apis/batch/v1/namespaces/default/cronjobs"
	const label = `spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`
	got := sendWarned(t, s, http.MethodPost, cjs, `{"metadata":{"name":"cj"},"spec":{"schedule":"* * * * *","suspend":true,
		"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","nodeSelector":{"beta.kubernetes.io/os":"linux"},
		"containers":[{"name":"c","image":"busybox"}]}}}}}}`, http.StatusCreated)
	wantWarnings(t, "create", got, label)
	got = sendWarned(t, s, http.MethodPatch, cjs+"/cj", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	wantWarnings(t, "labels", got)
	got = sendWarned(t, s, http.MethodPatch, cjs+"/cj", `{"spec":{"schedule":"*/2 * * * *"}}`, http.StatusOK)
	wantWarnings(t, "schedule", got, label)
}

// TestJobWarningsServed: a job's pod template warns at spec.template.
func TestJobWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	got := sendWarned(t, s, http.MethodPost, "/apis/batch/v1/namespaces/default/jobs", `{"metadata":{"name":"j"},"spec":{"suspend":true,
		"template":{"spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":-1,"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	wantWarnings(t, "create", got, "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1")
}
