package conformance

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/testenv"
)

// krExitCode is kubectl's exit status (0 when it succeeded).
func krExitCode(t *testing.T, r kubectlResult) int {
	t.Helper()
	if r.Err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(r.Err, &ee) {
		t.Fatalf("kubectl did not run: %v", r.Err)
	}
	return ee.ExitCode()
}

// krDiffLines are the changed lines ("-..." and "+...") of a unified
// diff, without the ---/+++ file headers.
func krDiffLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") {
			continue
		}
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			ls = append(ls, l)
		}
	}
	return ls
}

// TestKubectlDiff: kubectl diff (client-side apply against a server-side
// dry run) exits 0 with no output when the live object matches, 1 with a
// diff naming the changed fields when it differs, and changes nothing.
func TestKubectlDiff(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	kubectl(t, env, krDeployment("web", 2, "nginx:1.25"), "apply", "-f", "-")
	rv := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.metadata.resourceVersion}")

	r := kubectlRun(t, env, krDeployment("web", 2, "nginx:1.25"), "diff", "-f", "-")
	if code := krExitCode(t, r); code != 0 || r.Stdout != "" {
		t.Errorf("diff of the applied manifest: exit %d, output %q, stderr %q; want 0 and nothing", code, r.Stdout, r.Stderr)
	}

	r = kubectlRun(t, env, krDeployment("web", 5, "nginx:1.27"), "diff", "-f", "-")
	if code := krExitCode(t, r); code != 1 {
		t.Fatalf("diff of a changed manifest: exit %d, want 1\nstdout %s\nstderr %s", code, r.Stdout, r.Stderr)
	}
	if !strings.HasPrefix(r.Stdout, "diff -u -N ") || !strings.Contains(r.Stdout, "/apps.v1.Deployment.default.web\n") {
		t.Errorf("diff header:\n%s", r.Stdout)
	}
	got := krDiffLines(r.Stdout)
	// The last-applied annotation changes with the manifest, generation
	// with the spec (the server's dry run computes it), and the two fields.
	want := []string{"-  generation: 1", "+  generation: 2", "-  replicas: 2", "+  replicas: 5", "-      - image: nginx:1.25", "+      - image: nginx:1.27"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("diff lacks %q; changed lines:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) && !strings.Contains(l, `{"apiVersion":"apps/v1"`) {
			t.Errorf("unexpected changed line %q", l)
		}
	}
	if now := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.metadata.resourceVersion} {.spec.replicas}"); now != rv+" 2" {
		t.Errorf("after diff: %q, want %q (nothing written)", now, rv+" 2")
	}

	// A ConfigMap has no generation (as in Kubernetes): its diff is the
	// data line, nothing else.
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n"
	kubectl(t, env, cm, "apply", "-f", "-")
	r = kubectlRun(t, env, strings.Replace(cm, "fast", "slow", 1), "diff", "-f", "-")
	if code := krExitCode(t, r); code != 1 {
		t.Fatalf("diff of a changed configmap: exit %d, stderr %s", code, r.Stderr)
	}
	cmLines := krDiffLines(r.Stdout)
	if !slices.Equal(cmLines, []string{"-  mode: fast", "+  mode: slow"}) {
		t.Errorf("configmap diff: changed lines %q, want only the data line", cmLines)
	}

	// An object that does not exist yet is all additions.
	r = kubectlRun(t, env, krDeployment("fresh", 1, "nginx"), "diff", "-f", "-")
	if code := krExitCode(t, r); code != 1 {
		t.Fatalf("diff of a new object: exit %d, stderr %s", code, r.Stderr)
	}
	for _, l := range krDiffLines(r.Stdout) {
		if !strings.HasPrefix(l, "+") {
			t.Errorf("diff of a new object removes %q", l)
		}
	}
	if !slices.Contains(krDiffLines(r.Stdout), "+  name: fresh") {
		t.Errorf("diff of a new object:\n%s", r.Stdout)
	}
	if r := kubectlRun(t, env, "", "get", "deployment", "fresh"); r.Err == nil {
		t.Error("diff created the new object")
	}

	// An invalid manifest is an error (exit > 1), not a difference.
	bad := strings.Replace(krDeployment("web", 2, "nginx"), "replicas: 2", "replicas: -1", 1)
	r = kubectlRun(t, env, bad, "diff", "-f", "-")
	if code := krExitCode(t, r); code <= 1 || !strings.Contains(r.Stderr, "spec.replicas") {
		t.Errorf("diff of an invalid manifest: exit %d, stderr %q; want > 1 naming spec.replicas", code, r.Stderr)
	}
}
