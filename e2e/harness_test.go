package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// setpointBin is the binary TestMain built.
var setpointBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "setpoint-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setpointBin = filepath.Join(dir, "setpoint")
	build := exec.Command("go", "build", "-race", "-o", setpointBin, "../cmd/setpoint")
	if os.Getenv("SETPOINT_E2E_NORACE") != "" {
		build = exec.Command("go", "build", "-o", setpointBin, "../cmd/setpoint")
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build setpoint:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a setpoint process.
type server struct {
	cmd        *exec.Cmd
	dataDir    string
	addr       string
	kubeconfig string
	log        *bytes.Buffer
	exited     chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startServer runs `setpoint apiserver` on dataDir, with extra flags, and
// waits for /readyz.
func startServer(t *testing.T, dataDir, storage string, extra ...string) *server {
	t.Helper()
	port := freePort(t)
	s := &server{
		dataDir: dataDir, addr: "127.0.0.1:" + strconv.Itoa(port),
		kubeconfig: filepath.Join(dataDir, "kubeconfig"), log: &bytes.Buffer{}, exited: make(chan struct{}),
	}
	// A bare API server runs no ServiceAccount controller, so, as
	// controller-runtime's envtest runs kube-apiserver, the ServiceAccount
	// admission (which refuses pods until "default" exists) is off.
	s.cmd = exec.Command(setpointBin, append([]string{"apiserver", "--data-dir", dataDir, "--listen", s.addr, "--storage", storage,
		"--disable-admission-plugins", "ServiceAccount"}, extra...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start setpoint: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() { s.stop() })
	s.waitReady(t)
	return s
}

// waitReady polls ready every 50 ms for up to 60 s, failing at once with
// the server's log if the process exits first.
func (s *server) waitReady(t *testing.T) {
	t.Helper()
	err := testwait.Poll(t.Context(), 60*time.Second, 50*time.Millisecond, func() error {
		select {
		case <-s.exited:
			t.Fatalf("setpoint exited before ready:\n%s", s.log.String())
		default:
		}
		if s.ready() {
			return nil
		}
		return errors.New("/readyz not 200 or kubeconfig not written")
	})
	if err != nil {
		t.Fatalf("setpoint not ready after 60s (%v):\n%s", err, s.log.String())
	}
}

// ready reports whether /readyz answers 200 and the kubeconfig names this
// server's address (a kubeconfig left by an earlier run names another).
func (s *server) ready() bool {
	kc, err := os.ReadFile(s.kubeconfig)
	if err != nil || !bytes.Contains(kc, []byte(s.addr)) {
		return false
	}
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://" + s.addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (s *server) stop() { stopProcess(s.cmd, s.exited, 15*time.Second) }

// stopProcess sends SIGTERM to a process that has not exited, and SIGKILL
// if it is still running after grace; it returns once the process is gone
// (exited closes when it is).
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// client returns an HTTP client and admin token read from the kubeconfig,
// as any client of the server would.
func (s *server) client(t *testing.T) (*http.Client, string) {
	t.Helper()
	raw, err := os.ReadFile(s.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				CA string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Token string `json:"token"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(raw, &kc); err != nil || len(kc.Clusters) == 0 || len(kc.Users) == 0 {
		t.Fatalf("parse kubeconfig: %v", err)
	}
	ca, err := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no CA in kubeconfig")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, kc.Users[0].User.Token
}

func kubectlPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KUBECTL"); p != "" {
		return p
	}
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl not found: install it or set KUBECTL (CI's .ci/run installs it)")
	}
	return p
}

// kubectl runs kubectl against s and returns its stdout; a non-zero exit
// fails the test with stderr.
func (s *server) kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := s.kubectlErr(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// kubectlErr runs kubectl and returns stdout, stderr and the exit error.
func (s *server) kubectlErr(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath(t), append([]string{"--kubeconfig", s.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}
