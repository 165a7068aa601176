package events_test

import (
	"net/http"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/apitest"
)

// TestDeleteIgnoresPropagation: events have no garbage collection, so a
// DELETE with a propagation policy removes the event at once (a Status,
// no finalizer), in both groups, as kube-apiserver; a failed precondition
// on the events.k8s.io view names the stored kind, Event of the core group.
func TestDeleteIgnoresPropagation(t *testing.T) {
	s := apitest.Start(t)
	const (
		core = "/api/v1/namespaces/default/events"
		evts = "/apis/events.k8s.io/v1/namespaces/default/events"
	)
	s.Create(t, core, `{apiVersion: v1, kind: Event, metadata: {name: a}, involvedObject: {kind: Pod, name: p, namespace: default}, reason: R, message: m, type: Normal}`)
	s.Create(t, evts, `{apiVersion: events.k8s.io/v1, kind: Event, metadata: {name: b}, eventTime: "2020-01-02T03:04:05.000000Z", reportingController: example.com/c, reportingInstance: i, action: A, reason: R, type: Normal, regarding: {kind: Pod, name: p, namespace: default}}`)

	code, out := s.Write(t, "DELETE", evts+"/b", map[string]any{"preconditions": map[string]any{"uid": "nope"}})
	details, _ := out["details"].(map[string]any)
	if code != http.StatusConflict || details["group"] != nil ||
		out["message"] != `Operation cannot be fulfilled on Event "b": the UID in the precondition (nope) does not match the UID in record (`+s.GetMap(t, evts+"/b")["metadata"].(map[string]any)["uid"].(string)+`). The object might have been deleted and then recreated` {
		t.Fatalf("failed precondition: %d %v", code, out)
	}
	for path, policy := range map[string]string{core + "/a": "Foreground", evts + "/b": "Orphan"} {
		code, out := s.Write(t, "DELETE", path, map[string]any{"propagationPolicy": policy})
		if code != http.StatusOK || out["kind"] != "Status" || out["status"] != "Success" {
			t.Errorf("DELETE %s (%s): %d %v, want a success Status", path, policy, code, out)
		}
		if code, _, _ := s.Do(t, "GET", path, "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s after DELETE: %d, want 404", path, code)
		}
	}
}
