package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cluster is the control plane under test.
type cluster struct {
	kubeconfig string
	stop       func()
}

// child is a process the runner started, its output in a log file.
type child struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

func startChild(name, logPath string, argv ...string) (*child, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	// Die with the runner, never outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(c.exited) }()
	return c, nil
}

// stop sends SIGTERM, then SIGKILL after grace.
func (c *child) stop(grace time.Duration) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// waitLog polls the child's log for want.
func (c *child) waitLog(ctx context.Context, want string) error {
	for {
		if b, _ := os.ReadFile(c.log); bytes.Contains(b, []byte(want)) {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited (%v); its log ends:\n%s", c.name, c.cmd.ProcessState, tailFile(c.log, 30))
		case <-ctx.Done():
			return fmt.Errorf("%s did not print %q: %w; its log ends:\n%s", c.name, want, ctx.Err(), tailFile(c.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startSetpoint runs `setpoint up --nodes N` on a fresh data directory under
// dir and waits until its nodes are Ready.
func startSetpoint(ctx context.Context, bin, dir, kubectl string, nodes int) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	p, err := startChild("setpoint up", filepath.Join(dir, "setpoint.log"), bin, "up",
		"--data-dir", data, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--nodes", strconv.Itoa(nodes))
	if err != nil {
		return nil, err
	}
	c := &cluster{kubeconfig: filepath.Join(data, "kubeconfig"), stop: func() { p.stop(30 * time.Second) }}
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := p.waitLog(upCtx, "setpoint is up at"); err != nil {
		c.stop()
		return nil, err
	}
	if err := waitNodesReady(upCtx, kubectl, c.kubeconfig, nodes); err != nil {
		c.stop()
		return nil, fmt.Errorf("setpoint: %w", err)
	}
	return c, nil
}

// waitNodesReady polls with kubectl until n Nodes are Ready.
func waitNodesReady(ctx context.Context, kubectl, kubeconfig string, n int) error {
	const tmpl = `{range .items[*]}{range .status.conditions[?(@.type=="Ready")]}{.status}{"\n"}{end}{end}`
	last := ""
	for {
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "-o", "jsonpath="+tmpl).CombinedOutput()
		if err == nil {
			if ready := strings.Count(string(out), "True"); ready >= n {
				return nil
			}
			last = fmt.Sprintf("nodes Ready: %q", out)
		} else {
			last = fmt.Sprintf("%v: %s", err, out)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d nodes not Ready: %s: %w", n, last, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
