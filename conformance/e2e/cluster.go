package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
)

// cluster is the control plane under test.
type cluster struct {
	kubeconfig string
	stop       func()
}

// e2eUnpullableImages are the images the e2e suite names as ones no
// registry has ("webserver:404" in apps/deployment.go, "foo:non-existent"
// in apps/daemon_set.go), so that a rollout to them stalls: a real node
// fails to pull them, and setpoint's nodes are told to.
var e2eUnpullableImages = []string{"webserver:404", "foo:non-existent"}

// startSetpoint runs `setpoint up --nodes N` on a fresh data directory under
// dir and waits until its nodes are Ready.
func startSetpoint(ctx context.Context, bin, dir, kubectl string, nodes int) (*cluster, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	p, err := proc.Start("setpoint up", filepath.Join(dir, "setpoint.log"), bin, "up",
		"--data-dir", data, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--nodes", strconv.Itoa(nodes),
		"--unpullable-image", strings.Join(e2eUnpullableImages, ","))
	if err != nil {
		return nil, err
	}
	c := &cluster{kubeconfig: filepath.Join(data, "kubeconfig"), stop: func() { p.Stop(30 * time.Second) }}
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := p.WaitLog(upCtx, "setpoint is up at"); err != nil {
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
