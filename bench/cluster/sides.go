package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
	"github.com/setpoint-dev/setpoint/compat/procstat"
)

// cluster is one side, running: the client-go driver's clientset and the
// processes whose memory and CPU time count.
type cluster struct {
	client  kubernetes.Interface
	procs   []procstat.Named
	startup time.Duration // process start to all nodes Ready
	stop    func() error
}

// side starts a fresh cluster of one kind with n nodes.
type side struct {
	name string
	// reference marks the real Kubernetes; the summary's ratios are each
	// side's to the first reference side.
	reference bool
	start     func(ctx context.Context, nodes int) (*cluster, error)
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

// setpointFlags are the flags of `setpoint up` of each setpoint side.
var setpointFlags = map[string][]string{
	"setpoint": nil,
	// Simulated nodes doing the API work KWOK's nodes do in the reference:
	// a pod's status written as it runs, nothing else. By default setpoint's
	// nodes also write the kubelet's Pulled, Created and Started events of
	// every container and read, as the node, what a pod needs (its
	// ServiceAccount for the token volume): four requests per pod that
	// KWOK never makes.
	"setpoint-kwok-nodes": {"--disable-kubelet-events", "--ignore-missing-pod-dependencies"},
	// The cost of authorization: the same run without it.
	"setpoint-alwaysallow": {"--authorization-mode", "AlwaysAllow"},
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
		port, err := proc.FreePort()
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		args := append([]string{"up", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:" + strconv.Itoa(port),
			"--nodes", strconv.Itoa(nodes)}, extra...)
		p, err := proc.Start("setpoint up", filepath.Join(dir, "setpoint.log"), append([]string{bin}, args...)...)
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		c := &cluster{procs: []procstat.Named{{Name: "setpoint", PID: p.Cmd.Process.Pid}}}
		c.stop = func() error {
			p.Stop(30 * time.Second)
			return os.RemoveAll(dir)
		}
		fail := func(err error) (*cluster, error) { return nil, errors.Join(err, c.stop()) }
		upCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := p.WaitLog(upCtx, "setpoint is up at"); err != nil {
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
