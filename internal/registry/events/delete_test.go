package events_test

import (
	"net/http"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestDeleteIgnoresPropagation: events have no garbage collection, so a
// DELETE with a propagation policy removes the event at once (a Status,
// no finalizer), in both groups, as kube-apiserver; a failed precondition
// on the events.k8s.io view names the stored kind, Event of the core group.
func TestDeleteIgnoresPropagation(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	const (
		core = "/api/v1/namespaces/default/events"
		evts = "/apis/events.k8s.io/v1/namespaces/default/events"
	)
	s.Must(t, http.MethodPost, core, `{"apiVersion":"v1","kind":"Event","metadata":{"name":"a"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","message":"m","type":"Normal"}`, http.StatusCreated, nil)
	var b struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	s.Must(t, http.MethodPost, evts, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"b"},"eventTime":"2020-01-02T03:04:05.000000Z","reportingController":"example.com/c","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"kind":"Pod","name":"p","namespace":"default"}}`, http.StatusCreated, &b)

	var out struct {
		Message string
		Details map[string]any
	}
	s.Must(t, http.MethodDelete, evts+"/b", `{"preconditions":{"uid":"nope"}}`, http.StatusConflict, &out)
	want := `Operation cannot be fulfilled on Event "b": the UID in the precondition (nope) does not match the UID in record (` + b.Metadata.UID + `). The object might have been deleted and then recreated`
	if out.Details["group"] != nil || out.Message != want {
		t.Fatalf("failed precondition: %+v, want message %q and no group", out, want)
	}
	for path, policy := range map[string]string{core + "/a": "Foreground", evts + "/b": "Orphan"} {
		var st struct{ Kind, Status string }
		s.Must(t, http.MethodDelete, path, `{"propagationPolicy":"`+policy+`"}`, http.StatusOK, &st)
		if st.Kind != "Status" || st.Status != "Success" {
			t.Errorf("DELETE %s (%s): %+v, want a success Status", path, policy, st)
		}
		if code, _ := s.Do(t, http.MethodGet, path, ""); code != http.StatusNotFound {
			t.Errorf("GET %s after DELETE: %d, want 404", path, code)
		}
	}
}
