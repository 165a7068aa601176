package podsecurity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	ps "github.com/setpoint-dev/setpoint/internal/admission/podsecurity"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// annotations collects the audit annotations the plugin records.
type annotations struct {
	mu  sync.Mutex
	got map[string]string
}

func (a *annotations) record(_ context.Context, k, v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got[k] = v
}

// take returns what was recorded since the last take.
func (a *annotations) take() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.got
	a.got = map[string]string{}
	return out
}

func podJSON(t *testing.T, name string, mutate func(p *corev1.Pod)) string {
	t.Helper()
	p := &corev1.Pod{}
	p.APIVersion, p.Kind, p.Name = "v1", "Pod", name
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	if mutate != nil {
		mutate(p)
	}
	return string(mustJSON(t, p))
}

func privilegedPod(p *corev1.Pod) {
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

const (
	restrictedDetails = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	privilegedDetails = `privileged (container "c" must not set securityContext.privileged=true)`
)

// TestConfigExemptionsAndAudit: a configuration's defaults apply to
// namespaces without labels; exempt namespaces, runtime classes and users
// are not checked (and a namespace labelled for a policy it will not get
// is warned); the audit annotations are kube-apiserver's; a namespace
// whose labels are malformed (written while the plugin was off) enforces
// restricted and records the error.
func TestConfigExemptionsAndAudit(t *testing.T) {
	t.Parallel()
	var current atomic.Pointer[ps.Plugin]
	s := reftest.Start(t, wiredTo(current.Load))
	audit := &annotations{got: map[string]string{}}
	cfg := &ps.Config{
		Defaults:   ps.Defaults{Enforce: "baseline", Audit: "restricted", Warn: "restricted"},
		Exemptions: ps.Exemptions{Namespaces: []string{"podsecurity-exempt"}, RuntimeClasses: []string{"kata"}},
	}
	// written before the plugin runs
	namespace(t, s, "podsecurity-malformed", map[string]string{ps.EnforceLevelLabel: "foo"})
	reg := prometheus.NewRegistry()
	p, err := ps.New(cfg, ps.Options{Annotate: audit.record, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	current.Store(p)

	namespace(t, s, "podsecurity-default", nil)
	s.Must(t, http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses", `{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"kata"},"handler":"kata"}`, http.StatusCreated, nil)
	wantRestricted := `would violate PodSecurity "restricted:latest": `
	steps := []struct {
		name, path, body string
		want             *reftest.Answer
		annotations      map[string]string
	}{
		{"defaults enforce baseline", "/api/v1/namespaces/podsecurity-default/pods", podJSON(t, "priv", privilegedPod),
			forbidden("priv", "baseline:latest", privilegedDetails),
			map[string]string{ps.AnnotationEnforcePolicy: "baseline:latest", ps.AnnotationAuditViolations: wantRestricted + privilegedDetails + ", " + restrictedDetails}},
		{"defaults warn and audit restricted", "/api/v1/namespaces/podsecurity-default/pods", podJSON(t, "plain", nil),
			admitted(http.StatusCreated, wantRestricted+restrictedDetails),
			map[string]string{ps.AnnotationEnforcePolicy: "baseline:latest", ps.AnnotationAuditViolations: wantRestricted + restrictedDetails}},
		{"exempt runtime class", "/api/v1/namespaces/podsecurity-default/pods", podJSON(t, "kata", func(p *corev1.Pod) { privilegedPod(p); p.Spec.RuntimeClassName = ptr.To("kata") }),
			admitted(http.StatusCreated), map[string]string{ps.AnnotationExempt: "runtimeClass"}},
		{"exempt namespace labelled for a policy", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"podsecurity-exempt","labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`,
			admitted(http.StatusCreated, `namespace "podsecurity-exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored`), map[string]string{}},
		{"exempt namespace", "/api/v1/namespaces/podsecurity-exempt/pods", podJSON(t, "priv", privilegedPod),
			admitted(http.StatusCreated), map[string]string{ps.AnnotationExempt: "namespace"}},
		{"exempt namespace, workload", "/apis/apps/v1/namespaces/podsecurity-exempt/replicasets", `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`,
			admitted(http.StatusCreated), map[string]string{ps.AnnotationExempt: "namespace"}},
		{"workload audited", "/apis/apps/v1/namespaces/podsecurity-default/replicasets", `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`,
			admitted(http.StatusCreated, wantRestricted+restrictedDetails), map[string]string{ps.AnnotationAuditViolations: wantRestricted + restrictedDetails}},
		{"malformed labels enforce restricted", "/api/v1/namespaces/podsecurity-malformed/pods", podJSON(t, "plain", nil),
			forbidden("plain", "restricted:latest", restrictedDetails),
			map[string]string{ps.AnnotationEnforcePolicy: "restricted:latest", ps.AnnotationAuditViolations: wantRestricted + restrictedDetails,
				ps.AnnotationError: `Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be one of privileged, baseline, restricted`}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			audit.take()
			s.Replay(t, []reftest.Case{{Name: "request", Request: reftest.Request{Method: http.MethodPost, Path: st.path, Body: json.RawMessage(st.body)}, Want: st.want, Ignore: ignoreAdmitted(st.want)}})
			if got := audit.take(); !reflect.DeepEqual(got, st.annotations) {
				t.Errorf("annotations\n got %q\nwant %q", got, st.annotations)
			}
		})
	}

	t.Run("exempt namespace's enforce level changed", func(t *testing.T) {
		h := s.Must(t, http.MethodPatch, "/api/v1/namespaces/podsecurity-exempt", `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce-version":"v1.30","pod-security.kubernetes.io/warn":"baseline"}}}`, http.StatusOK, nil)
		want := warningHeader(`namespace "podsecurity-exempt" is exempt from Pod Security, and the policy (enforce=restricted:v1.30, warn=baseline:latest) will be ignored`)
		if got := h.Values("Warning"); len(got) != 1 || got[0] != want {
			t.Errorf("warnings\n got %q\nwant %q", got, want)
		}
	})

	t.Run("unchanged malformed labels may stay", func(t *testing.T) {
		s.Must(t, http.MethodPatch, "/api/v1/namespaces/podsecurity-malformed", `{"metadata":{"labels":{"team":"a"}}}`, http.StatusOK, nil)
	})

	t.Run("exempt user", func(t *testing.T) {
		var review struct {
			Status struct {
				UserInfo struct{ Username string } `json:"userInfo"`
			} `json:"status"`
		}
		s.Must(t, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, http.StatusCreated, &review)
		withUser := *cfg
		withUser.Exemptions.Usernames = []string{review.Status.UserInfo.Username}
		p, err := ps.New(&withUser, ps.Options{Annotate: audit.record, Metrics: reg})
		if err != nil {
			t.Fatal(err)
		}
		current.Store(p)
		audit.take()
		h := s.Must(t, http.MethodPost, "/api/v1/namespaces/podsecurity-default/pods", podJSON(t, "admin-priv", privilegedPod), http.StatusCreated, nil)
		if w := h.Values("Warning"); len(w) != 0 {
			t.Errorf("warnings %q", w)
		}
		if got := audit.take(); !reflect.DeepEqual(got, map[string]string{ps.AnnotationExempt: "user"}) {
			t.Errorf("annotations %q", got)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		if got := gatherText(t, reg); got != wantMetrics {
			t.Errorf("metrics\n got %s\nwant %s", got, wantMetrics)
		}
	})
}

// wantMetrics are the pod_security_* metrics of the requests of
// TestConfigExemptionsAndAudit, as kube-apiserver counts them.
const wantMetrics = `# HELP pod_security_errors_total [ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.
# TYPE pod_security_errors_total counter
pod_security_errors_total{fatal="false",request_operation="create",resource="pod",subresource=""} 1
# HELP pod_security_evaluations_total [ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.
# TYPE pod_security_evaluations_total counter
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="baseline",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="create",resource="pod",subresource=""} 0
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="update",resource="pod",subresource=""} 0
pod_security_evaluations_total{decision="deny",mode="audit",policy_level="restricted",policy_version="latest",request_operation="create",resource="controller",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="audit",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 3
pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="baseline",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="warn",policy_level="restricted",policy_version="latest",request_operation="create",resource="controller",subresource=""} 1
pod_security_evaluations_total{decision="deny",mode="warn",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
# HELP pod_security_exemptions_total [ALPHA] Number of exempt requests, not counting ignored or out of scope requests.
# TYPE pod_security_exemptions_total counter
pod_security_exemptions_total{request_operation="create",resource="controller",subresource=""} 1
pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 3
pod_security_exemptions_total{request_operation="update",resource="controller",subresource=""} 0
pod_security_exemptions_total{request_operation="update",resource="pod",subresource=""} 0
`

// ignoreAdmitted leaves an admitted object out of the comparison.
func ignoreAdmitted(w *reftest.Answer) []string {
	if w.Code < 300 {
		return []string{"*"}
	}
	return nil
}

// gatherText renders the counters of reg in the text format (families and
// series in order).
func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", f.GetName(), f.GetHelp(), f.GetName())
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			fmt.Fprintf(&b, "%s{%s} %g\n", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue())
		}
	}
	return b.String()
}
