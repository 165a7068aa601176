package sampleapiserver

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binaries the tests run, built once by TestMain.
var setpointBin, sampleBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sampleapiserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setpointBin, sampleBin = filepath.Join(dir, "setpoint"), filepath.Join(dir, "sample-apiserver")
	for _, b := range []struct{ dir, out, pkg string }{
		{"../..", setpointBin, "./cmd/setpoint"},
		{".", sampleBin, "k8s.io/sample-apiserver"},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir, cmd.Stderr = b.dir, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", b.pkg+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a child process whose output is kept for failure reports.
type process struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.out.String()
	if len(s) > 8000 {
		s = "…" + s[len(s)-8000:]
	}
	return s
}

// start runs bin with args until the test ends.
func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.output())
		}
	})
	return p
}

// waitFor polls ok until it holds, failing after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, p *process, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if p != nil {
			select {
			case <-p.done:
				t.Fatalf("%s exited while waiting for %s:\n%s", p.name, what, p.output())
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// httpsUp reports whether GET https://addr/path answers 200 (certificate
// not checked: only liveness is asked).
func httpsUp(addr, path string) bool {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // liveness only
	resp, err := c.Get("https://" + addr + path)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// etcdBinary finds the reference etcd: $ETCD_BIN, etcd on PATH, or the
// repository's .bin/etcd-* (built with the reference: make compat).
func etcdBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("ETCD_BIN"); b != "" {
		return b
	}
	if b, err := exec.LookPath("etcd"); err == nil {
		return b
	}
	for _, pattern := range []string{"../../.bin/etcd-*"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0]
		}
	}
	t.Fatal("no etcd binary (set ETCD_BIN, or build the reference: cd compat && go run ./cmd/refcluster -binaries): the sample API server stores its objects in etcd")
	return ""
}

// startEtcd runs a one-member etcd on loopback and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	client, peer := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	clientURL, peerURL := "http://127.0.0.1:"+strconv.Itoa(client), "http://127.0.0.1:"+strconv.Itoa(peer)
	p := start(t, "etcd", etcdBinary(t), "--name", "default", "--data-dir", t.TempDir(),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "default="+peerURL)
	waitFor(t, "etcd", 60*time.Second, p, func() bool {
		resp, err := http.Get(clientURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return clientURL
}

// cluster is a `setpoint up` process.
type cluster struct {
	proc       *process
	kubeconfig string
}

// startCluster runs `setpoint up` with nodes simulated nodes.
func startCluster(t *testing.T, nodes int) *cluster {
	t.Helper()
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t, "127.0.0.1"))
	c := &cluster{kubeconfig: filepath.Join(dir, "kubeconfig")}
	c.proc = start(t, "setpoint", setpointBin, "up", "--data-dir", dir, "--listen", addr, "--nodes", strconv.Itoa(nodes))
	waitFor(t, "setpoint", 120*time.Second, c.proc, func() bool {
		kc, err := os.ReadFile(c.kubeconfig)
		return err == nil && bytes.Contains(kc, []byte(addr)) && httpsUp(addr, "/readyz")
	})
	return c
}

// kubectl runs the real kubectl against the cluster; stdin may be "". It
// returns the standard output, and on failure the standard error too
// (warnings, which kubectl writes there, are left out otherwise).
func (c *cluster) kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

// must runs kubectl and fails the test when it fails.
func (c *cluster) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := c.kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// hostIP is a non-loopback IPv4 address of this host (endpoints may not be
// loopback addresses).
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address for the sample API server (endpoints refuse loopback addresses)")
	return ""
}
