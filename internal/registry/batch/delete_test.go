package batch_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestJobDeleteOrphansByDefault checks kube-apiserver's default policy of
// batch/v1 jobs: a DELETE naming no propagation policy adds the "orphan"
// finalizer (the garbage collector then leaves the pods), one naming
// Background removes the job at once.
func TestJobDeleteOrphansByDefault(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const jobs = "/apis/batch/v1/namespaces/default/jobs"
	for _, name := range []string{"a", "b"} {
		body := `{"metadata":{"name":"` + name + `"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}}`
		if code, out, _ := s.Do(t, http.MethodPost, jobs, "application/json", strings.NewReader(body)); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, out)
		}
	}
	code, out, _ := s.Do(t, http.MethodDelete, jobs+"/a", "", nil)
	var j batchv1.Job
	if code != 200 || json.Unmarshal(out, &j) != nil || j.DeletionTimestamp == nil || !slices.Equal(j.Finalizers, []string{"orphan"}) {
		t.Fatalf("delete without a policy: %d %s", code, out)
	}
	code, out, _ = s.Do(t, http.MethodDelete, jobs+"/b", "application/json", strings.NewReader(`{"propagationPolicy":"Background"}`))
	if code != 200 || !strings.Contains(string(out), `"kind":"Status"`) {
		t.Fatalf("delete in the background: %d %s", code, out)
	}
	if code, _, _ := s.Do(t, http.MethodGet, jobs+"/b", "", nil); code != 404 {
		t.Fatalf("job b after a background delete: %d", code)
	}
}
