package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// syncBuffer is an io.Writer safe for a process's output and a polling test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// example is a running example binary.
type example struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	errOut *syncBuffer
	exited chan struct{}
}

// startExample builds examples/<name> (with -race unless SETPOINT_E2E_NORACE)
// and runs it with args.
func startExample(t *testing.T, name string, args ...string) *example {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	buildArgs := []string{"build", "-o", bin, "../examples/" + name}
	if raceBuild() {
		buildArgs = []string{"build", "-race", "-o", bin, "../examples/" + name}
	}
	if out, err := exec.Command("go", buildArgs...).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	e := &example{out: &syncBuffer{}, errOut: &syncBuffer{}, exited: make(chan struct{})}
	e.cmd = exec.Command(bin, args...)
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.errOut
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = e.cmd.Wait(); close(e.exited) }()
	t.Cleanup(func() {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(20 * time.Second):
			_ = e.cmd.Process.Kill()
			<-e.exited
		}
	})
	return e
}

// startOperator starts an operator example (startExample), prints the end
// of its stderr if the test fails, and waits until it logs ready (the line
// it writes once its controllers run).
func startOperator(t *testing.T, name, ready string, args ...string) *example {
	t.Helper()
	ex := startExample(t, name, args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, tail(ex.errOut.String(), 80))
		}
	})
	eventually(t, 60*time.Second, name+" running", func() string {
		if !strings.Contains(ex.errOut.String(), ready) {
			return "not yet"
		}
		return ""
	})
	return ex
}

// waitFor polls the example's output until it contains every line of want.
func (e *example) waitFor(t *testing.T, want ...string) {
	t.Helper()
	missing := ""
	err := testwait.Poll(t.Context(), 60*time.Second, 50*time.Millisecond, func() error {
		out := e.out.String()
		missing = ""
		for _, w := range want {
			if !strings.Contains(out, w+"\n") {
				missing = w
				break
			}
		}
		if missing == "" {
			return nil
		}
		select {
		case <-e.exited:
			t.Fatalf("example exited before printing %q\nstdout:\n%s\nstderr:\n%s", missing, out, e.errOut.String())
		default:
		}
		return testwait.ErrNotYet
	})
	if err != nil {
		t.Fatalf("example did not print %q within 60s\nstdout:\n%s\nstderr:\n%s", missing, e.out.String(), e.errOut.String())
	}
}

// stop sends SIGTERM and checks the example shuts down cleanly.
func (e *example) stop(t *testing.T) {
	t.Helper()
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("example did not stop within 20s of SIGTERM\nstderr:\n%s", e.errOut.String())
	}
	if code := e.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("example exited with %d\nstderr:\n%s", code, e.errOut.String())
	}
}

func raceBuild() bool { return os.Getenv("SETPOINT_E2E_NORACE") == "" }

// TestExamplePodPrinter runs seed 002's controller against a real server:
// existing pods are printed at start, later creates and updates are synced,
// a deletion is reported, and pods of other namespaces are not seen.
func TestExamplePodPrinter(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "bolt")
	s.kubectl(t, podManifest("before", "default"), "apply", "-f", "-")
	s.kubectl(t, "", "create", "namespace", "other")
	ex := startExample(t, "podprinter", "--kubeconfig", s.kubeconfig, "--namespace", "default")
	ex.waitFor(t, "pod cache synced", "Sync/Add/Update for Pod before")

	s.kubectl(t, podManifest("after", "default"), "apply", "-f", "-")
	s.kubectl(t, podManifest("elsewhere", "other"), "apply", "-f", "-")
	s.kubectl(t, "", "label", "pod", "before", "touched=yes")
	ex.waitFor(t, "Sync/Add/Update for Pod after")
	s.kubectl(t, "", "delete", "pod", "before", "--grace-period=0", "--force")
	ex.waitFor(t, "Pod default/before does not exist anymore")
	if out := ex.out.String(); strings.Contains(out, "elsewhere") {
		t.Fatalf("a pod of another namespace was printed:\n%s", out)
	}
	ex.stop(t)
}

// TestExampleWorkerPool runs seed 000's worker-pool controller: every pod is
// processed with its phase, a failed pod with a controller owner is deleted
// (its owner would replace it), a failed pod without one is left alone.
func TestExampleWorkerPool(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "bolt")
	s.kubectl(t, podManifest("web-1", "default"), "apply", "-f", "-")
	ex := startExample(t, "workerpool", "--kubeconfig", s.kubeconfig, "--workers", "2", "--delete-failed")
	ex.waitFor(t, "Controller synced and ready", "Processing Pod: default/web-1 (Phase: Pending)", "Successfully synced 'default/web-1'")

	owned := strings.Replace(podManifest("owned", "default"), "  namespace: default\n",
		"  namespace: default\n  ownerReferences:\n  - apiVersion: apps/v1\n    kind: ReplicaSet\n    name: web\n"+
			"    uid: 0b6a1f52-58f4-4c8e-9d2e-5f3f0c1d2e3f\n    controller: true\n", 1)
	s.kubectl(t, owned, "apply", "-f", "-")
	s.kubectl(t, podManifest("loner", "default"), "apply", "-f", "-")
	for _, name := range []string{"owned", "loner"} {
		s.kubectl(t, "", "patch", "pod", name, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Failed"}}`)
	}
	ex.waitFor(t,
		"Pod default/owned is in Failed state, taking action...",
		"Deleted failed Pod default/owned",
		"Pod default/owned has been deleted",
		"Pod default/loner is in Failed state, taking action...")
	if out := s.kubectl(t, "", "get", "pods", "-o", "name"); strings.Contains(out, "pod/owned") || !strings.Contains(out, "pod/loner") {
		t.Fatalf("after the worker pool acted, pods are:\n%s", out)
	}
	ex.stop(t)
}

func podManifest(name, namespace string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + namespace +
		"\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
}
