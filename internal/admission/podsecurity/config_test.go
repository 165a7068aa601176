package podsecurity_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	ps "github.com/setpoint-dev/setpoint/internal/admission/podsecurity"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestParseConfig: the PodSecurityConfiguration of the cluster-level
// tutorial of kubernetes.io, defaults, and the refusals of a malformed one.
func TestParseConfig(t *testing.T) {
	cfg, err := ps.ParseConfig([]byte(`
apiVersion: pod-security.admission.config.k8s.io/v1beta1
kind: PodSecurityConfiguration
defaults:
  enforce: "baseline"
  enforce-version: "latest"
  audit: "restricted"
  audit-version: "latest"
  warn: "restricted"
  warn-version: "latest"
exemptions:
  usernames: []
  runtimeClasses: []
  namespaces: [kube-system]
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Defaults != (ps.Defaults{Enforce: "baseline", EnforceVersion: "latest", Audit: "restricted", AuditVersion: "latest", Warn: "restricted", WarnVersion: "latest"}) ||
		len(cfg.Exemptions.Namespaces) != 1 || cfg.Exemptions.Namespaces[0] != "kube-system" {
		t.Fatalf("parsed %+v", cfg)
	}
	def, err := ps.ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Defaults != (ps.Defaults{Enforce: "privileged", EnforceVersion: "latest", Audit: "privileged", AuditVersion: "latest", Warn: "privileged", WarnVersion: "latest"}) {
		t.Fatalf("default %+v", def)
	}
	for _, c := range []struct{ doc, err string }{
		{`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","defaults":{"enforce":"strict","warn-version":"1.2"}}`,
			`PodSecurity invalid: [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, defaults.warn-version: Invalid value: "1.2": must be "latest" or "v1.x"]`},
		{`{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","exemptions":{"namespaces":["a","a","B"],"usernames":[""],"runtimeClasses":["x_y"]}}`,
			`PodSecurity invalid: [exemptions.namespaces[1]: Duplicate value: "a", exemptions.namespaces[2]: Invalid value: "B": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.runtimeClasses[0]: Invalid value: "x_y": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), exemptions.usernames[0]: Invalid value: "": username must not be empty]`},
		{`{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AdmissionConfiguration"}`,
			`expected PodSecurityConfiguration of pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1, got kind "AdmissionConfiguration" of "apiserver.config.k8s.io/v1"`},
	} {
		_, err := ps.ParseConfig([]byte(c.doc))
		if err == nil || err.Error() != c.err {
			t.Errorf("%s:\n got %v\nwant %s", c.doc, err, c.err)
		}
	}
}

// TestExistingPodLimits: a new enforce level is checked against at most
// the configured number of pods, the first pod of each controller first
// (a1, b1 and c of the five: a2 and a3 are not checked), and within the time allowed (the check stops
// after the pod it is on when time is up); the warnings say how many were
// checked.
func TestExistingPodLimits(t *testing.T) {
	t.Parallel()
	p := newPlugin(t, nil)
	ps.SetPodCheckLimits(p, 3, time.Second)
	s := reftest.Start(t, wired(p))
	namespace(t, s, "podsecurity-limits", nil)
	owner := func(uid string) string {
		return `"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs-` + uid + `","uid":"` + uid + `","controller":true}]`
	}
	for _, pod := range []struct{ name, meta, spec string }{
		{"a1", owner("u1"), `"hostNetwork":true`}, {"a2", owner("u1"), `"hostNetwork":true`}, {"a3", owner("u1"), `"hostNetwork":true`},
		{"b1", owner("u2"), `"hostPID":true`}, {"c", "", `"volumes":[{"name":"h","hostPath":{"path":"/"}}]`},
	} {
		meta := `"name":"` + pod.name + `"`
		if pod.meta != "" {
			meta += "," + pod.meta
		}
		s.Must(t, http.MethodPost, "/api/v1/namespaces/podsecurity-limits/pods",
			`{"apiVersion":"v1","kind":"Pod","metadata":{`+meta+`},"spec":{`+pod.spec+`,"containers":[{"name":"c","image":"busybox"}]}}`, http.StatusCreated, nil)
	}
	h := s.Must(t, http.MethodPatch, "/api/v1/namespaces/podsecurity-limits?dryRun=All", `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`, http.StatusOK, nil)
	want := []string{
		warningHeader("new PodSecurity enforce level only checked against the first 3 of 5 existing pods"),
		warningHeader(`existing pods in namespace "podsecurity-limits" violate the new PodSecurity enforce level "baseline:latest"`),
		warningHeader("a1 (and 1 other pod): host namespaces"),
		warningHeader("c: hostPath volumes"),
	}
	if got := h.Values("Warning"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}

	ps.SetPodCheckLimits(p, 3000, time.Nanosecond)
	h = s.Must(t, http.MethodPatch, "/api/v1/namespaces/podsecurity-limits", `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`, http.StatusOK, nil)
	want = []string{
		warningHeader("new PodSecurity enforce level only checked against the first 1 of 5 existing pods"),
		warningHeader(`existing pods in namespace "podsecurity-limits" violate the new PodSecurity enforce level "restricted:latest"`),
		warningHeader("a1: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"),
	}
	if got := h.Values("Warning"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
}
