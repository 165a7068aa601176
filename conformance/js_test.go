package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestJavaScriptClient runs js/setpoint.test.mjs (the official JavaScript
// client @kubernetes/client-node, pinned in js/package-lock.json: typed CRUD
// and errors, watches, an informer, KubernetesObjectApi) against a fresh
// setpoint, with Node's own test runner. The client is installed from the
// npm registry on first use (npm ci).
func TestJavaScriptClient(t *testing.T) {
	if _, err := os.Stat(filepath.Join("js", "node_modules", "@kubernetes", "client-node")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = "js"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in conformance/js: %v\n%s", err, out)
		}
	}
	env := startSetpoint(t, testenv.Options{})
	cmd := exec.Command("node", "--test", "setpoint.test.mjs")
	cmd.Dir = "js"
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test setpoint.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the JavaScript client's tests failed: %v", err)
	}
}
