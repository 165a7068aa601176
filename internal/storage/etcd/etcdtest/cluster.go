package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a member may take to report healthy.
const startTimeout = 30 * time.Second

// Cluster is a running etcd cluster of the test.
type Cluster struct {
	t       testing.TB
	members []*Member
}

// Member is one etcd process. Its URLs and data directory never change, so
// a restarted member is the same member.
type Member struct {
	Name      string
	ClientURL string
	PeerURL   string
	DataDir   string
	LogFile   string
	// args are the command-line flags, fixed at creation.
	args []string
	// cmd and exited describe the running process; nil when stopped.
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a single-member cluster and stops it when t ends.
func Start(t testing.TB) *Cluster { return StartCluster(t, 1) }

// StartCluster starts an n-member cluster, waits until every member is
// healthy (a leader is elected), and stops it when t ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Cluster{t: t}
	var initial []string
	for i := range n {
		m := &Member{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: "http://" + freeAddr(t),
			PeerURL:   "http://" + freeAddr(t),
		}
		m.DataDir = filepath.Join(dir, m.Name)
		m.LogFile = filepath.Join(dir, m.Name+".log")
		c.members = append(c.members, m)
		initial = append(initial, m.Name+"="+m.PeerURL)
	}
	token := fmt.Sprintf("setpoint-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.members {
		m.args = []string{
			"--name", m.Name, "--data-dir", m.DataDir,
			"--listen-client-urls", m.ClientURL, "--advertise-client-urls", m.ClientURL,
			"--listen-peer-urls", m.PeerURL, "--initial-advertise-peer-urls", m.PeerURL,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--heartbeat-interval", "50", "--election-timeout", "500",
			"--snapshot-count", "10000", "--log-level", "warn",
		}
		m.args = append([]string{bin}, m.args...)
	}
	t.Cleanup(c.stopAll)
	for _, m := range c.members {
		if err := m.start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range c.members {
		if err := m.waitHealthy(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Endpoints returns the client URLs of all members.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

// Members returns the members, in creation order.
func (c *Cluster) Members() []*Member { return c.members }

// Kill ends member i with SIGKILL and waits for the process to exit.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	m := c.members[i]
	if m.cmd == nil {
		c.t.Fatalf("etcdtest: kill %s: not running", m.Name)
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
	m.cmd = nil
}

// Restart starts member i again on its data directory and waits until it
// is healthy.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	m := c.members[i]
	if m.cmd != nil {
		c.t.Fatalf("etcdtest: restart %s: still running", m.Name)
	}
	if err := m.start(); err != nil {
		c.t.Fatal(err)
	}
	if err := m.waitHealthy(); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) stopAll() {
	for _, m := range c.members {
		m.stop()
	}
	if c.t.Failed() {
		for _, m := range c.members {
			c.t.Logf("etcdtest: %s log: %s", m.Name, m.LogFile)
		}
	}
}

func (m *Member) start() error {
	log, err := os.OpenFile(m.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcdtest: %w", err)
	}
	cmd := exec.Command(m.args[0], m.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("etcdtest: start %s: %w", m.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(exited)
	}()
	m.cmd, m.exited = cmd, exited
	return nil
}

// stop ends the member with SIGTERM, then SIGKILL after 5s.
func (m *Member) stop() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
	m.cmd = nil
}

// waitHealthy polls the member's /health endpoint, which answers true
// once the member has a leader and can serve a linearizable read.
func (m *Member) waitHealthy() error {
	deadline := time.Now().Add(startTimeout)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-m.exited:
			return fmt.Errorf("etcdtest: %s exited at start-up; see %s", m.Name, m.LogFile)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.ClientURL+"/health", nil)
		resp, err := client.Do(req)
		healthy := false
		if err == nil {
			var buf [256]byte
			n, _ := resp.Body.Read(buf[:])
			resp.Body.Close()
			healthy = resp.StatusCode == http.StatusOK && strings.Contains(string(buf[:n]), `"true"`)
		}
		cancel()
		if healthy {
			client.CloseIdleConnections()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcdtest: %s not healthy after %v; see %s", m.Name, startTimeout, m.LogFile)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
