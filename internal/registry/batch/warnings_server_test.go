package batch_test

import (
	"net/http"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestCronJobWarningsServed: a cron job warns of its job template's pod
// template at spec.jobTemplate.spec.template, on create and on an update
// of its spec; not on one of its labels.
func TestCronJobWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const cjs = "/apis/batch/v1/namespaces/default/cronjobs"
	const label = `spec.jobTemplate.spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`
	got := s.Warned(t, http.MethodPost, cjs, `{"metadata":{"name":"cj"},"spec":{"schedule":"* * * * *","suspend":true,
		"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","nodeSelector":{"beta.kubernetes.io/os":"linux"},
		"containers":[{"name":"c","image":"busybox"}]}}}}}}`, http.StatusCreated)
	testserver.WantWarnings(t, "create", got, label)
	got = s.Warned(t, http.MethodPatch, cjs+"/cj", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	testserver.WantWarnings(t, "labels", got)
	got = s.Warned(t, http.MethodPatch, cjs+"/cj", `{"spec":{"schedule":"*/2 * * * *"}}`, http.StatusOK)
	testserver.WantWarnings(t, "schedule", got, label)
}

// TestJobWarningsServed: a job's pod template warns at spec.template.
func TestJobWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	got := s.Warned(t, http.MethodPost, "/apis/batch/v1/namespaces/default/jobs", `{"metadata":{"name":"j"},"spec":{"suspend":true,
		"template":{"spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":-1,"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	testserver.WantWarnings(t, "create", got, "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1")
}
