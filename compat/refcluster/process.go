package refcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one running component of the cluster, its output appended to
// a log file.
type process struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

func startProcess(name, logPath string, argv []string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("refcluster: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("refcluster: start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// alive reports an error if the process has exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("refcluster: %s exited (%v); its log ends:\n%s", p.name, p.cmd.ProcessState, p.tail(30))
	default:
		return nil
	}
}

// stop ends the process with SIGTERM, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
