package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/testenv"
)

// kubectlPath is the kubectl binary: $KUBECTL, else the one on PATH (CI's
// .ci/run builds one from k8s.io/kubectl when the machine has none).
func kubectlPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KUBECTL"); p != "" {
		return p
	}
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl not found: install it or set KUBECTL")
	}
	return p
}

// kubectlResult is what one kubectl run printed and how it ended.
type kubectlResult struct {
	Stdout, Stderr string
	Err            error
}

// kubectlRun runs kubectl against env with stdin and returns its output;
// it never fails the test by itself.
func kubectlRun(t *testing.T, env *testenv.Environment, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return kubectlResult{Stdout: out.String(), Stderr: errOut.String(), Err: err}
}

// kubectl runs kubectl and fails the test unless it exits 0; it returns
// stdout.
func kubectl(t *testing.T, env *testenv.Environment, stdin string, args ...string) string {
	t.Helper()
	r := kubectlRun(t, env, stdin, args...)
	if r.Err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}
