package core_test

import (
	"net/http"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

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
	got := s.Warned(t, http.MethodPost, pods, pod, http.StatusCreated)
	testserver.WantWarnings(t, "create", got, oldOSLabel,
		`spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`)
	got = s.Warned(t, http.MethodPatch, pods+"/web", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	testserver.WantWarnings(t, "update", got)

	s.Warned(t, http.MethodPost, "/api/v1/namespaces/default/limitranges",
		`{"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1"}}]}}`, http.StatusCreated)
	refused := `{"metadata":{"name":"big"},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},
		"containers":[{"name":"c","image":"busybox","resources":{"limits":{"cpu":"2"}}}]}}`
	got = s.Warned(t, http.MethodPost, pods, refused, http.StatusForbidden)
	testserver.WantWarnings(t, "create refused by a LimitRange", got, oldOSLabel)
}

// TestPodTemplateWarningsServed: a pod template warns on create and on an
// update that changes the template (of the whole template), not on one
// that changes its labels only.
func TestPodTemplateWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const pts = "/api/v1/namespaces/default/podtemplates"
	got := s.Warned(t, http.MethodPost, pts, `{"metadata":{"name":"t"},"template":{"spec":{
		"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}`, http.StatusCreated)
	testserver.WantWarnings(t, "create", got, "template."+oldOSLabel)
	got = s.Warned(t, http.MethodPatch, pts+"/t", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	testserver.WantWarnings(t, "labels", got)
	got = s.Warned(t, http.MethodPatch, pts+"/t", `{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}`, http.StatusOK)
	testserver.WantWarnings(t, "template change", got, "template."+oldOSLabel,
		"template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1")
}

// TestReplicationControllerWarningsServed: a replication controller's
// update that changes its spec warns of the template as it was before the
// update, as kube-apiserver v1.37 does.
func TestReplicationControllerWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const rcs = "/api/v1/namespaces/default/replicationcontrollers"
	got := s.Warned(t, http.MethodPost, rcs, `{"metadata":{"name":"rc"},"spec":{"replicas":0,"selector":{"app":"a"},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	testserver.WantWarnings(t, "create", got, "spec.template."+oldOSLabel)
	got = s.Warned(t, http.MethodPatch, rcs+"/rc", `{"spec":{"template":{"spec":{"nodeSelector":null}}}}`, http.StatusOK)
	testserver.WantWarnings(t, "update dropping the label", got, "spec.template."+oldOSLabel)
	got = s.Warned(t, http.MethodPatch, rcs+"/rc", `{"spec":{"replicas":1}}`, http.StatusOK)
	testserver.WantWarnings(t, "update after it", got)
}
