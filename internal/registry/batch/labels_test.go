package batch_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestJobLabelsFromTemplate: as kube-apiserver, a job created without
// labels gets its template's (generated) labels when it is read back,
// the create answer included, but after validation: an invalid name is
// reported at the template's labels only.
func TestJobLabelsFromTemplate(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const jobs = "/apis/batch/v1/namespaces/default/jobs"
	body := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}}`
	}
	code, out, _ := s.Do(t, http.MethodPost, jobs, "application/json", strings.NewReader(body("a")))
	var j batchv1.Job
	if code != http.StatusCreated || json.Unmarshal(out, &j) != nil || j.Labels["batch.kubernetes.io/job-name"] != "a" {
		t.Fatalf("create: %d %s", code, out)
	}
	code, out, _ = s.Do(t, http.MethodGet, jobs+"/a", "", nil)
	if code != http.StatusOK || json.Unmarshal(out, &j) != nil || j.Labels["job-name"] != "a" {
		t.Errorf("get: %d %s", code, out)
	}
	code, out, _ = s.Do(t, http.MethodPost, jobs, "application/json", strings.NewReader(body("Bad_Name!")))
	var st metav1.Status
	if json.Unmarshal(out, &st) != nil || code != http.StatusUnprocessableEntity || st.Details == nil {
		t.Fatalf("bad name: %d %s", code, out)
	}
	for _, c := range st.Details.Causes {
		if strings.HasPrefix(c.Field, "metadata.labels") {
			t.Errorf("bad name reported at %s: %s", c.Field, out)
		}
	}
}
