package proc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Child is a process the benchmark started, its output in a log file.
type Child struct {
	Name   string
	Log    string
	Cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs argv with its output in logPath; the child dies with the
// benchmark.
func Start(name, logPath string, argv ...string) (*Child, error) {
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
	c := &Child{Name: name, Log: logPath, Cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(c.exited) }()
	return c, nil
}

// Stop sends SIGTERM, then SIGKILL after grace.
func (c *Child) Stop(grace time.Duration) {
	_ = c.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(grace):
		_ = c.Cmd.Process.Kill()
		<-c.exited
	}
}

// Alive returns an error with the end of the log once the child exited.
func (c *Child) Alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited (%v); its log ends:\n%s", c.Name, c.Cmd.ProcessState, TailFile(c.Log, 30))
	default:
		return nil
	}
}

// WaitLog polls the child's log for want.
func (c *Child) WaitLog(ctx context.Context, want string) error {
	for {
		if b, _ := os.ReadFile(c.Log); bytes.Contains(b, []byte(want)) {
			return nil
		}
		if err := c.Alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not print %q: %w; its log ends:\n%s", c.Name, want, ctx.Err(), TailFile(c.Log, 30))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TailFile returns the last n lines of path.
func TailFile(path string, n int) string {
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

// FreePort returns a loopback TCP port free at the moment.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
