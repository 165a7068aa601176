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
	code, out, h := s.Do(t, http.MethodDelete, jobs+"/a", "", nil)
	var j batchv1.Job
	if code != 200 || json.Unmarshal(out, &j) != nil || j.DeletionTimestamp == nil || !slices.Equal(j.Finalizers, []string{"orphan"}) {
		t.Fatalf("delete without a policy: %d %s", code, out)
	}
	// As kube-apiserver: a deletion naming no policy warns, found or not.
	const warning = `299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"`
	if w := h.Values("Warning"); !slices.Equal(w, []string{warning}) {
		t.Errorf("delete without a policy warns %q", w)
	}
	if code, _, h := s.Do(t, http.MethodDelete, jobs+"/missing", "", nil); code != 404 || !slices.Equal(h.Values("Warning"), []string{warning}) {
		t.Errorf("delete of a missing job: %d, warnings %q", code, h.Values("Warning"))
	}
	code, out, h = s.Do(t, http.MethodDelete, jobs+"/b", "application/json", strings.NewReader(`{"propagationPolicy":"Background"}`))
	if code != 200 || !strings.Contains(string(out), `"kind":"Status"`) || len(h.Values("Warning")) != 0 {
		t.Fatalf("delete in the background: %d %s, warnings %q", code, out, h.Values("Warning"))
	}
	if code, _, _ := s.Do(t, http.MethodGet, jobs+"/b", "", nil); code != 404 {
		t.Fatalf("job b after a background delete: %d", code)
	}
}
