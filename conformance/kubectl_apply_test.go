package conformance

import (
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/testenv"
)

// ssaDeployment is the configuration the server-side apply rows apply.
func ssaDeployment(name, replicas, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: default
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: web
        image: ` + image + `
        ports:
        - containerPort: 80
`
}

// Row "apply --server-side with managedFields".
func TestKubectlServerSideApplyManagedFields(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	if out := kubectl(t, env, ssaDeployment("web", "2", "nginx:1"), "apply", "--server-side", "-f", "-"); !strings.Contains(out, "deployment.apps/web serverside-applied") {
		t.Fatalf("apply --server-side: %q", out)
	}
	y := kubectl(t, env, "", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields")
	for _, want := range []string{"managedFields:", "manager: kubectl", "operation: Apply", "apiVersion: apps/v1", "fieldsType: FieldsV1",
		"f:replicas: {}", `k:{"name":"web"}:`, `k:{"containerPort":80,"protocol":"TCP"}:`} {
		if !strings.Contains(y, want) {
			t.Errorf("get -o yaml --show-managed-fields lacks %q:\n%s", want, y)
		}
	}
	if y := kubectl(t, env, "", "get", "deployment", "web", "-o", "yaml"); strings.Contains(y, "managedFields") {
		t.Errorf("managedFields shown without --show-managed-fields:\n%s", y)
	}
	// Re-applying a changed image updates the object; the one container
	// and its one port are merged by key, not appended.
	kubectl(t, env, ssaDeployment("web", "2", "nginx:2"), "apply", "--server-side", "-f", "-")
	if got := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={range .spec.template.spec.containers[*]}{.image} {.ports[*].containerPort}/{.ports[*].protocol};{end}"); got != "nginx:2 80/TCP;" {
		t.Errorf("containers after re-apply: %q", got)
	}
	// A client-side create records an Update entry for kubectl-create.
	kubectl(t, env, "", "create", "configmap", "plain", "--from-literal=a=1")
	y = kubectl(t, env, "", "get", "configmap", "plain", "-o", "yaml", "--show-managed-fields")
	for _, want := range []string{"manager: kubectl-create", "operation: Update", "f:a: {}"} {
		if !strings.Contains(y, want) {
			t.Errorf("configmap created by kubectl lacks %q:\n%s", want, y)
		}
	}
}

// Row "apply --server-side conflict detection".
func TestKubectlServerSideApplyConflicts(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	kubectl(t, env, ssaDeployment("web", "2", "nginx:1"), "apply", "--server-side", "-f", "-")
	kubectl(t, env, "", "patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"replicas":5}}`)

	r := kubectlRun(t, env, ssaDeployment("web", "2", "nginx:1"), "apply", "--server-side", "-f", "-")
	if r.Err == nil {
		t.Fatalf("conflicting apply succeeded: %s", r.Stdout)
	}
	for _, want := range []string{`Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas`, "--force-conflicts"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("conflict output lacks %q:\n%s", want, r.Stderr)
		}
	}
	if got := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("replicas after the refused apply = %s, want 5", got)
	}
	// Another apply manager conflicts too.
	r = kubectlRun(t, env, ssaDeployment("web", "2", "nginx:9"), "apply", "--server-side", "--field-manager=other", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Stderr, "Apply failed with 2 conflicts: conflicts with \"kubectl\":\n- .spec.template.spec.containers[name=\"web\"].image\nconflicts with \"kubectl-patch\" using apps/v1:\n- .spec.replicas") {
		t.Errorf("apply by another manager: err %v\n%s", r.Err, r.Stderr)
	}
	if out := kubectl(t, env, ssaDeployment("web", "2", "nginx:1"), "apply", "--server-side", "--force-conflicts", "-f", "-"); !strings.Contains(out, "serverside-applied") {
		t.Errorf("apply --force-conflicts: %q", out)
	}
	if got := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("replicas after --force-conflicts = %s, want 2", got)
	}
	y := kubectl(t, env, "", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields")
	if strings.Contains(y, "manager: kubectl-patch") {
		t.Errorf("kubectl-patch keeps an entry after losing its only field:\n%s", y)
	}
}

// Row "diff --server-side".
func TestKubectlServerSideApplyDiff(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	// diff of an object that does not exist shows it whole, creates nothing.
	r := kubectlRun(t, env, ssaDeployment("web", "2", "nginx:1"), "diff", "--server-side", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Stdout, "+  name: web") {
		t.Errorf("diff of a new object: err %v\n%s\n%s", r.Err, r.Stdout, r.Stderr)
	}
	if r := kubectlRun(t, env, "", "get", "deployment", "web"); r.Err == nil {
		t.Fatalf("diff created the deployment")
	}
	kubectl(t, env, ssaDeployment("web", "2", "nginx:1"), "apply", "--server-side", "-f", "-")
	if r := kubectlRun(t, env, ssaDeployment("web", "2", "nginx:1"), "diff", "--server-side", "-f", "-"); r.Err != nil || r.Stdout != "" {
		t.Errorf("diff of the applied configuration: err %v\n%s\n%s", r.Err, r.Stdout, r.Stderr)
	}
	r = kubectlRun(t, env, ssaDeployment("web", "2", "nginx:2"), "diff", "--server-side", "-f", "-")
	if r.Err == nil || !strings.Contains(r.Stdout, "-      - image: nginx:1") || !strings.Contains(r.Stdout, "+      - image: nginx:2") ||
		strings.Contains(r.Stdout, "-  resourceVersion") {
		t.Errorf("diff --server-side of a new image: err %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, r.Stderr)
	}
	if got := kubectl(t, env, "", "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1" {
		t.Errorf("diff changed the image to %s", got)
	}
}
