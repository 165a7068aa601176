package namespacelifecycle_test

import (
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/admissiontest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

func configMap(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}
}

// TestNamespaceLifecycle checks the three refusals over HTTP, each leaving
// the store unchanged: deleting a system namespace, creating in a missing
// namespace, creating in a terminating one (with its cause).
func TestNamespaceLifecycle(t *testing.T) {
	s := admissiontest.Start(t, testserver.Options{})
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		s.WantRefused(http.MethodDelete, "/api/v1/namespaces/"+ns, nil, "/api/v1/namespaces", admissiontest.Refusal{
			Code: 403, Reason: metav1.StatusReasonForbidden, Name: ns, Kind: "namespaces",
			Message: `namespaces "` + ns + `" is forbidden: this namespace may not be deleted`})
	}
	s.WantRefused(http.MethodPost, "/api/v1/namespaces/nope/configmaps", configMap("c"), "/api/v1/configmaps", admissiontest.Refusal{
		Code: 404, Reason: metav1.StatusReasonNotFound, Name: "nope", Kind: "namespaces", Message: `namespaces "nope" not found`})

	// Without the namespace controller a deleted namespace stays
	// Terminating (its kubernetes finalizer).
	s.CreateNamespace("dying")
	s.MustDo(http.MethodDelete, "/api/v1/namespaces/dying", nil, nil)
	var ns corev1.Namespace
	s.MustDo(http.MethodGet, "/api/v1/namespaces/dying", nil, &ns)
	if ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace phase %q, want Terminating", ns.Status.Phase)
	}
	s.WantRefused(http.MethodPost, "/api/v1/namespaces/dying/configmaps", configMap("c"), "/api/v1/configmaps", admissiontest.Refusal{
		Code: 403, Reason: metav1.StatusReasonForbidden, Name: "c", Kind: "configmaps",
		Message: `configmaps "c" is forbidden: unable to create new content in namespace dying because it is being terminated`})
	_, raw := s.Do(http.MethodPost, "/api/v1/namespaces/dying/configmaps", configMap("c"))
	var st metav1.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	want := metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: "namespace dying is being terminated", Field: "metadata.namespace"}
	if len(st.Details.Causes) != 1 || st.Details.Causes[0] != want {
		t.Errorf("causes %+v, want %+v", st.Details.Causes, want)
	}
	// Other namespaces and cluster-scoped objects are not affected.
	s.MustDo(http.MethodPost, "/api/v1/namespaces/default/configmaps", configMap("c"), nil)
}
