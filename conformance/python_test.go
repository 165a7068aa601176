package conformance

import (
	"os"
	"os/exec"
	"testing"

	"github.com/setpoint-dev/setpoint/testenv"
)

// python3 is Debian's interpreter, where python3-kubernetes installs the
// official Python client (.ci/run installs it).
const python3 = "/usr/bin/python3"

// TestPythonClient runs python/test_setpoint.py (the official Python
// client: typed CRUD, errors, paged lists, watches with timeouts, resume,
// bookmarks and a too-old resourceVersion, the dynamic client) against a
// fresh setpoint.
func TestPythonClient(t *testing.T) {
	if err := exec.Command(python3, "-c", "import kubernetes").Run(); err != nil {
		t.Fatalf("the Python client is not installed (apt-get install python3-kubernetes): %v", err)
	}
	env := startSetpoint(t, testenv.Options{})
	// A restart starts the watch windows at the current revision, so that
	// an old resourceVersion is too old (test_watch_from_too_old_…).
	if err := env.Restart(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python3, "-m", "unittest", "-v", "test_setpoint")
	cmd.Dir = "python"
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("python3 -m unittest -v test_setpoint:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests failed: %v", err)
	}
}
