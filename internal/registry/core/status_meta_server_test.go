package core_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// TestStatusPatchKeepsMetadata checks that a status patch of a namespace,
// a Service or a Node keeps the labels and annotations it changes, as
// kube-apiserver does (their status strategies reset the spec only; the
// conformance suite patches a namespace's and a Service's status with an
// annotation and expects it kept), and still cannot change the spec.
func TestStatusPatchKeepsMetadata(t *testing.T) {
	c := reftest.Start(t, testserver.Options{})
	c.Must(t, post, "/api/v1/namespaces", `{"metadata":{"name":"st"}}`, http.StatusCreated, nil)
	c.Must(t, post, "/api/v1/namespaces/st/services",
		`{"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`, http.StatusCreated, nil)
	c.Must(t, post, "/api/v1/nodes", `{"metadata":{"name":"n1"}}`, http.StatusCreated, nil)

	const meta = `"metadata":{"labels":{"patched":"yes"},"annotations":{"status-patched":"yes"}}`
	for _, tc := range []struct{ path, body string }{
		{"/api/v1/namespaces/st/status", `{` + meta + `,"spec":{"finalizers":[]},"status":{"conditions":[{"type":"StatusUpdate","status":"True","reason":"E2E","message":"set"}]}}`},
		{"/api/v1/namespaces/st/services/web/status", `{` + meta + `,"spec":{"selector":{"app":"other"}},"status":{"conditions":[{"type":"StatusUpdate","status":"True","reason":"E2E","message":"set","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`},
		{"/api/v1/nodes/n1/status", `{` + meta + `,"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Fine","message":"set"}]}}`},
	} {
		var got struct {
			Metadata struct{ Labels, Annotations map[string]string }
			Spec     map[string]any
			Status   struct{ Conditions []corev1.NamespaceCondition }
		}
		c.Must(t, patch, tc.path, tc.body, http.StatusOK, &got)
		if got.Metadata.Labels["patched"] != "yes" || got.Metadata.Annotations["status-patched"] != "yes" {
			t.Errorf("%s: metadata %+v, want the patched label and annotation kept", tc.path, got.Metadata)
		}
		if len(got.Status.Conditions) == 0 {
			t.Errorf("%s: status not written: %+v", tc.path, got.Status)
		}
		var stored struct {
			Metadata struct{ Annotations map[string]string }
			Spec     map[string]any
		}
		c.Must(t, get, tc.path[:len(tc.path)-len("/status")], "", http.StatusOK, &stored)
		if stored.Metadata.Annotations["status-patched"] != "yes" {
			t.Errorf("%s: stored annotations %v", tc.path, stored.Metadata.Annotations)
		}
		if f, ok := stored.Spec["finalizers"].([]any); ok && len(f) == 0 {
			t.Errorf("%s: the status patch changed the spec: %v", tc.path, stored.Spec)
		}
		if sel, ok := stored.Spec["selector"].(map[string]any); ok && sel["app"] != "web" {
			t.Errorf("%s: the status patch changed the spec: %v", tc.path, stored.Spec)
		}
		if stored.Spec["unschedulable"] == true {
			t.Errorf("%s: the status patch changed the spec: %v", tc.path, stored.Spec)
		}
	}
}
