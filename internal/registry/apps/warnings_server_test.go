package apps_test

import (
	"net/http"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	oldOSLabel = `spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`
	negGrace   = "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1"
)

// TestDeploymentWarningsServed: a deployment warns of its name and its
// template on create; on update, of the whole template when the update
// moves the generation (its spec or its annotations change), of nothing
// otherwise.
func TestDeploymentWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const deps = "/apis/apps/v1/namespaces/default/deployments"
	got := s.Warned(t, http.MethodPost, deps, `{"metadata":{"name":"web.1"},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"a"}},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	testserver.WantWarnings(t, "create", got,
		"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
		oldOSLabel)
	got = s.Warned(t, http.MethodPatch, deps+"/web.1", `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}`, http.StatusOK)
	testserver.WantWarnings(t, "template change", got, oldOSLabel, negGrace)
	got = s.Warned(t, http.MethodPatch, deps+"/web.1", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	testserver.WantWarnings(t, "labels", got)
	got = s.Warned(t, http.MethodPatch, deps+"/web.1", `{"metadata":{"annotations":{"a":"b"}}}`, http.StatusOK)
	testserver.WantWarnings(t, "annotations", got, oldOSLabel, negGrace)
}

// TestDaemonSetWarningsServed: a daemon set's update warns only when it
// changes the template (and moves the template generation).
func TestDaemonSetWarningsServed(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	const dss = "/apis/apps/v1/namespaces/default/daemonsets"
	got := s.Warned(t, http.MethodPost, dss, `{"metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"app":"a"}},
		"template":{"metadata":{"labels":{"app":"a"}},"spec":{"nodeSelector":{"beta.kubernetes.io/os":"linux"},"containers":[{"name":"c","image":"busybox"}]}}}}`,
		http.StatusCreated)
	testserver.WantWarnings(t, "create", got, oldOSLabel)
	got = s.Warned(t, http.MethodPatch, dss+"/ds", `{"spec":{"minReadySeconds":5}}`, http.StatusOK)
	testserver.WantWarnings(t, "spec change outside the template", got)
	got = s.Warned(t, http.MethodPatch, dss+"/ds", `{"spec":{"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}`, http.StatusOK)
	testserver.WantWarnings(t, "template change", got, oldOSLabel, negGrace)
}
