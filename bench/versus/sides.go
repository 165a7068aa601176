package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
	"github.com/setpoint-dev/setpoint/compat/procstat"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

const (
	sideReference = "reference"
	sideSetpoint  = "setpoint"
)

// server is one side, running: how to reach it and the processes whose
// memory and CPU time count.
type server struct {
	kubeconfig string
	procs      []procstat.Named
	startup    time.Duration // process start to ready
	stop       func() error
}

// side starts a fresh server of one kind.
type side struct {
	name  string
	start func(ctx context.Context) (*server, error)
}

// referenceSide runs etcd and kube-apiserver (compat/refcluster), nothing
// else: the workloads need no controller.
func referenceSide(bins *refcluster.Binaries) side {
	return side{name: sideReference, start: func(ctx context.Context) (*server, error) {
		begin := time.Now()
		ref, err := refcluster.Start(ctx, refcluster.Options{Binaries: bins})
		if err != nil {
			return nil, err
		}
		s := &server{kubeconfig: ref.Kubeconfig(), startup: time.Since(begin), stop: ref.Stop}
		for _, p := range ref.Processes() {
			s.procs = append(s.procs, procstat.Named{Name: p.Name, PID: p.PID})
		}
		return s, nil
	}}
}

// setpointSide runs `setpoint apiserver` on a fresh data directory, with
// its default storage (bolt, durable, as etcd is) unless extra flags say
// otherwise.
func setpointSide(bin string, extra ...string) side {
	return side{name: sideSetpoint, start: func(ctx context.Context) (*server, error) {
		begin := time.Now()
		dir, err := os.MkdirTemp("", "bench-versus-")
		if err != nil {
			return nil, err
		}
		port, err := proc.FreePort()
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		argv := append([]string{bin, "apiserver", "--data-dir", filepath.Join(dir, "data"),
			"--listen", "127.0.0.1:" + strconv.Itoa(port), "--log-level", "warn"}, extra...)
		p, err := proc.Start("setpoint apiserver", filepath.Join(dir, "setpoint.log"), argv...)
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		s := &server{kubeconfig: filepath.Join(dir, "data", "kubeconfig"),
			procs: []procstat.Named{{Name: "setpoint", PID: p.Cmd.Process.Pid}}}
		s.stop = func() error {
			p.Stop(30 * time.Second)
			return os.RemoveAll(dir)
		}
		upCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := waitReady(upCtx, s.kubeconfig, p); err != nil {
			return nil, errors.Join(err, s.stop())
		}
		s.startup = time.Since(begin)
		return s, nil
	}}
}

// waitReady polls until the kubeconfig exists and /readyz answers ok.
func waitReady(ctx context.Context, kubeconfig string, p *proc.Child) error {
	var cs *kubernetes.Clientset
	for {
		if err := p.Alive(); err != nil {
			return err
		}
		if cs == nil {
			cs, _ = newClientset(kubeconfig, nil) // nil until the kubeconfig is written
		}
		if cs != nil {
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err == nil && string(body) == "ok" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("setpoint not ready: %w; its log ends:\n%s", ctx.Err(), proc.TailFile(p.Log, 30))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// restConfig is client-go's configuration from the kubeconfig with its
// defaults (HTTP/2, protobuf for built-in types, the streaming list in
// informers) except for client-side throttling, which is off so that the
// driver never waits on itself, and for the transport cache: each config
// gets a dialer of its own (the one client-go uses by default), so that
// each client has its own connections, as separate processes would, where
// client-go would share one transport between equal configs. wrap, if
// set, wraps the transport.
func restConfig(kubeconfig string, wrap func(http.RoundTripper) http.RoundTripper) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no rate limiter
	cfg.UserAgent = "setpoint-bench-versus"
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	return cfg, nil
}

func newClientset(kubeconfig string, wrap func(http.RoundTripper) http.RoundTripper) (*kubernetes.Clientset, error) {
	cfg, err := restConfig(kubeconfig, wrap)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// buildSetpoint builds cmd/setpoint of the repository into .bin/.
func buildSetpoint(root string) (string, error) {
	out := filepath.Join(root, ".bin", "setpoint-versus")
	logf("building setpoint into %s", out)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/setpoint")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build setpoint: %w\n%s", err, b)
	}
	return out, nil
}

// repoRoot is the setpoint repository holding the working directory: the
// first directory upwards with cmd/setpoint.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "setpoint", "main.go")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no setpoint repository above %s: run from bench/versus", wd)
		}
	}
}
