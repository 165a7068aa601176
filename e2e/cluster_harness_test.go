package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// proc is a running setpoint process other than a bare API server: `up`
// or a component started against a kubeconfig.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

// startProc runs the setpoint binary with args; the test's end stops it.
func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(setpointBin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			out := p.out.String()
			t.Logf("warnings and errors of %s:\n%s", p.name, tail(problems(out), 60))
			t.Logf("output of %s:\n%s", p.name, tail(out, 60))
		}
	})
	return p
}

// problems keeps the lines of a log that are warnings or errors (the end
// of a failed run is mostly the shutdown's lines).
func problems(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) stop() { stopProcess(p.cmd, p.exited, 20*time.Second) }

// kill9 sends SIGKILL and waits until the process is gone.
func (p *proc) kill9() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// waitOutput polls the process's output for want.
func (p *proc) waitOutput(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	err := testwait.Poll(t.Context(), timeout, 50*time.Millisecond, func() error {
		if strings.Contains(p.out.String(), want) {
			return nil
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before printing %q:\n%s", p.name, want, tail(p.out.String(), 80))
		default:
		}
		return testwait.ErrNotYet
	})
	if err != nil {
		t.Fatalf("%s did not print %q within %s:\n%s", p.name, want, timeout, tail(p.out.String(), 80))
	}
}

// upCluster is a `setpoint up` process; its embedded *server gives the
// kubectl helpers.
type upCluster struct {
	*server
	up *proc
}

// startUp runs `setpoint up --nodes N` on a fresh data directory and waits
// until it reports the whole cluster ready.
func startUp(t *testing.T, nodes int, extra ...string) *upCluster {
	t.Helper()
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	args := append([]string{"up", "--data-dir", dir, "--listen", addr, "--nodes", strconv.Itoa(nodes)}, extra...)
	p := startProc(t, "setpoint up", args...)
	p.waitOutput(t, "setpoint is up at", 90*time.Second)
	s := &server{dataDir: dir, addr: addr, kubeconfig: filepath.Join(dir, "kubeconfig"), exited: p.exited, cmd: p.cmd}
	return &upCluster{server: s, up: p}
}

// restClient is a setpoint rest client for the kubeconfig, closed at the
// test's end.
func restClient(t *testing.T, kubeconfig string) *rest.Client {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // not paced by the client default of 5 requests per second
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func podsOf(c *rest.Client) *rest.Resource[*corev1.Pod, *corev1.PodList] {
	return rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true)
}

func jobsOf(c *rest.Client) *rest.Resource[*batchv1.Job, *batchv1.JobList] {
	return rest.For[*batchv1.Job, *batchv1.JobList](c, batchv1.SchemeGroupVersion.WithResource("jobs"), true)
}

// eventually polls cond every 200 ms until it returns "" (done) or the
// timeout passes, when the test fails with the last reason given.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	testwait.UntilEvery(t, timeout, 200*time.Millisecond, what, testwait.Reason(cond))
}

// runningPods lists the pods of ns with the selector that are Running,
// Ready and not terminating.
func runningPods(t *testing.T, c *rest.Client, ns, selector string) []corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := podsOf(c).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			out = append(out, p)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
