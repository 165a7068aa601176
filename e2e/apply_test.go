package e2e

import (
	"strings"
	"testing"
)

// ssaDeployment is the configuration the server-side apply rows apply.
func ssaDeployment(replicas, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ` + image + `
        ports:
        - containerPort: 80
`
}

// TestKubectlServerSideApply drives the real kubectl's server-side apply
// against the binary: apply, managedFields, conflicts, --force-conflicts
// and diff --server-side.
func TestKubectlServerSideApply(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "bolt")

	if out := s.kubectl(t, ssaDeployment("2", "nginx:1"), "apply", "--server-side", "-f", "-"); !strings.Contains(out, "deployment.apps/web serverside-applied") {
		t.Fatalf("apply --server-side: %q", out)
	}
	y := s.kubectl(t, "", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields")
	for _, want := range []string{"managedFields:", "manager: kubectl", "operation: Apply", "fieldsType: FieldsV1", "f:replicas: {}", `k:{"name":"web"}:`, `k:{"containerPort":80,"protocol":"TCP"}:`} {
		if !strings.Contains(y, want) {
			t.Errorf("get -o yaml --show-managed-fields lacks %q:\n%s", want, y)
		}
	}
	if y := s.kubectl(t, "", "get", "deployment", "web", "-o", "yaml"); strings.Contains(y, "managedFields") {
		t.Errorf("get -o yaml shows managedFields without --show-managed-fields:\n%s", y)
	}

	// Another manager changes replicas with a client-side patch.
	s.kubectl(t, "", "patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"replicas":5}}`)
	if y := s.kubectl(t, "", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields"); !strings.Contains(y, "manager: kubectl-patch") || !strings.Contains(y, "operation: Update") {
		t.Errorf("patch left no Update entry of kubectl-patch:\n%s", y)
	}

	// Re-applying replicas: 2 conflicts with kubectl-patch.
	out, errOut, err := s.kubectlErr(t, ssaDeployment("2", "nginx:1"), "apply", "--server-side", "-f", "-")
	if err == nil {
		t.Fatalf("conflicting apply succeeded: %s", out)
	}
	for _, want := range []string{`Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas`, "--force-conflicts"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("conflict output lacks %q:\n%s", want, errOut)
		}
	}
	if got := s.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("replicas after the refused apply = %s, want 5", got)
	}

	// --force-conflicts takes replicas back.
	if out := s.kubectl(t, ssaDeployment("2", "nginx:1"), "apply", "--server-side", "--force-conflicts", "-f", "-"); !strings.Contains(out, "serverside-applied") {
		t.Errorf("apply --force-conflicts: %q", out)
	}
	if got := s.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("replicas after --force-conflicts = %s, want 2", got)
	}

	// diff --server-side: nothing to show (exit 0), then the image change
	// (exit 1), and the object is not changed.
	if out, errOut, err := s.kubectlErr(t, ssaDeployment("2", "nginx:1"), "diff", "--server-side", "-f", "-"); err != nil || out != "" {
		t.Errorf("diff of the applied configuration: err %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = s.kubectlErr(t, ssaDeployment("2", "nginx:2"), "diff", "--server-side", "-f", "-")
	if err == nil || !strings.Contains(out, "-      - image: nginx:1") || !strings.Contains(out, "+      - image: nginx:2") || strings.Contains(out, "-  resourceVersion") {
		t.Errorf("diff --server-side of a new image: err %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if got := s.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1" {
		t.Errorf("diff changed the image to %s", got)
	}
}
