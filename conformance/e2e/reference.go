package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// KWOK, the simulated nodes of the reference, as bench/cluster runs it: its
// default fast stages (nodes initialized at once and kept alive with a
// Lease; pods Running and Ready at once, Job pods Succeeded at once,
// deleted pods gone at once).
const (
	kwokModule  = "sigs.k8s.io/kwok"
	kwokVersion = "v0.8.0"
)

var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// startReference runs etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler v1.37.2 (compat/refcluster) and KWOK with n nodes.
func startReference(ctx context.Context, root, dir, kubectl string, n int) (*cluster, error) {
	kwok, stages, err := findKWOK(root)
	if err != nil {
		return nil, err
	}
	ref, err := refcluster.Start(ctx, refcluster.Options{ControllerManager: true, Scheduler: true, Dir: filepath.Join(dir, "reference")})
	if err != nil {
		return nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return nil, errors.Join(err, ref.Stop())
	}
	args := []string{kwok, "--kubeconfig=" + ref.Kubeconfig(), "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-lease-duration-seconds=40", "--server-address=127.0.0.1:" + strconv.Itoa(port), "--cidr=10.0.0.0/16"}
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	kw, err := proc.Start("kwok", filepath.Join(dir, "kwok.log"), args...)
	if err != nil {
		return nil, errors.Join(err, ref.Stop())
	}
	c := &cluster{kubeconfig: ref.Kubeconfig(), stop: func() { kw.Stop(15 * time.Second); _ = ref.Stop() }}
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := createKWOKNodes(upCtx, kubectl, c.kubeconfig, n); err != nil {
		c.stop()
		return nil, err
	}
	if err := waitNodesReady(upCtx, kubectl, c.kubeconfig, n); err != nil {
		c.stop()
		return nil, fmt.Errorf("reference: %w", err)
	}
	return c, nil
}

// createKWOKNodes creates n Nodes for KWOK, named and sized as setpoint's
// simulated nodes (32 CPUs, 256Gi, 110 pods).
func createKWOKNodes(ctx context.Context, kubectl, kubeconfig string, n int) error {
	var b strings.Builder
	for i := range n {
		name := "node-" + strconv.Itoa(i)
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Node
metadata:
  name: %[1]s
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: %[1]s, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec: {podCIDR: 10.64.%[2]d.0/24}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
`, name, i)
	}
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "create", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("create KWOK nodes: %w\n%s", err, out)
	}
	return nil
}

// findKWOK returns the KWOK executable ($SETPOINT_KWOK, else
// $SETPOINT_REFERENCE_BIN_DIR/kwok, else .bin/kwok-v0.8.0 as bench/cluster
// builds it) and its stage files from the module cache.
func findKWOK(root string) (bin string, stages []string, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", kwokModule+"@"+kwokVersion)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Dir = os.TempDir() // outside any module
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("kwok: go mod download: %w", err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", nil, fmt.Errorf("kwok: go mod download: %v %s", err, m.Error)
	}
	for _, s := range kwokStages {
		stages = append(stages, filepath.Join(m.Dir, s))
	}
	for _, p := range []string{os.Getenv("SETPOINT_KWOK"), binIn(os.Getenv("SETPOINT_REFERENCE_BIN_DIR"), "kwok"),
		filepath.Join(root, ".bin", "kwok-"+kwokVersion)} {
		if p != "" && exists(p) {
			return p, stages, nil
		}
	}
	return "", nil, errors.New("kwok: no binary: set SETPOINT_KWOK, or build .bin/kwok-" + kwokVersion + " (make bench-cluster does)")
}

func binIn(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}
