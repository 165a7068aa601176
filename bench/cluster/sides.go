package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// cluster is one side, running: the client-go driver's clientset and the
// processes whose memory and CPU time count.
type cluster struct {
	client  kubernetes.Interface
	procs   []namedPID
	startup time.Duration // process start to all nodes Ready
	stop    func() error
}

// side starts a fresh cluster of one kind with n nodes.
type side struct {
	name  string
	start func(ctx context.Context, nodes int) (*cluster, error)
}

// driverClient is the benchmark's own client: client-go with its limits
// raised so that the driver never throttles itself.
func driverClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.UserAgent = "setpoint-bench-cluster"
	return kubernetes.NewForConfig(cfg)
}

// child is a process the benchmark started, its output in a log file.
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
	// Die with the benchmark, never outlive it.
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

func (c *child) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited (%v); its log ends:\n%s", c.name, c.cmd.ProcessState, tailFile(c.log, 30))
	default:
		return nil
	}
}

// waitLog polls the child's log for want.
func (c *child) waitLog(ctx context.Context, want string) error {
	for {
		if b, _ := os.ReadFile(c.log); bytes.Contains(b, []byte(want)) {
			return nil
		}
		if err := c.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not print %q: %w; its log ends:\n%s", c.name, want, ctx.Err(), tailFile(c.log, 30))
		case <-time.After(50 * time.Millisecond):
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

// setpointSide runs `setpoint up --nodes N` (and extra flags) on a fresh
// data directory.
func setpointSide(name, bin string, extra ...string) side {
	return side{name: name, start: func(ctx context.Context, nodes int) (*cluster, error) {
		begin := time.Now()
		dir, err := os.MkdirTemp("", "bench-setpoint-")
		if err != nil {
			return nil, err
		}
		port, err := freePort()
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		args := append([]string{"up", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:" + strconv.Itoa(port),
			"--nodes", strconv.Itoa(nodes)}, extra...)
		p, err := startChild("setpoint up", filepath.Join(dir, "setpoint.log"), append([]string{bin}, args...)...)
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		c := &cluster{procs: []namedPID{{"setpoint", p.cmd.Process.Pid}}}
		c.stop = func() error {
			p.stop(30 * time.Second)
			return os.RemoveAll(dir)
		}
		fail := func(err error) (*cluster, error) { return nil, errors.Join(err, c.stop()) }
		upCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := p.waitLog(upCtx, "setpoint is up at"); err != nil {
			return fail(err)
		}
		if c.client, err = driverClient(filepath.Join(dir, "data", "kubeconfig")); err != nil {
			return fail(err)
		}
		if err := waitNodesReady(upCtx, c.client, nodes); err != nil {
			return fail(fmt.Errorf("setpoint: %w", err))
		}
		c.startup = time.Since(begin)
		return c, nil
	}}
}
