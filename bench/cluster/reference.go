package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
	"github.com/setpoint-dev/setpoint/compat/procstat"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// kwokNodeAnnotation marks the Nodes KWOK manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// referenceSide runs etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler (with --kube-api-qps/--kube-api-burst at qps/burst, or
// their defaults when qps is 0) and KWOK, and creates the nodes.
func referenceSide(name string, bins *refcluster.Binaries, kwok kwokFiles, qps, burst int) side {
	return side{name: name, reference: true, start: func(ctx context.Context, nodes int) (*cluster, error) {
		begin := time.Now()
		var limits []string
		if qps > 0 {
			limits = []string{"--kube-api-qps=" + strconv.Itoa(qps), "--kube-api-burst=" + strconv.Itoa(burst)}
		}
		ref, err := refcluster.Start(ctx, refcluster.Options{
			ControllerManager: true, Scheduler: true, Binaries: bins,
			ControllerManagerArgs: limits, SchedulerArgs: limits,
		})
		if err != nil {
			return nil, err
		}
		c := &cluster{}
		var kw *proc.Child
		c.stop = func() error {
			if kw != nil {
				kw.Stop(15 * time.Second)
			}
			return ref.Stop()
		}
		fail := func(err error) (*cluster, error) { return nil, errors.Join(err, c.stop()) }
		port, err := proc.FreePort()
		if err != nil {
			return fail(err)
		}
		args := []string{kwok.Binary,
			"--kubeconfig=" + ref.Kubeconfig(),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--node-lease-duration-seconds=40",
			"--server-address=127.0.0.1:" + strconv.Itoa(port),
			"--cidr=10.0.0.0/16",
		}
		for _, s := range kwok.Stages {
			args = append(args, "--config="+s)
		}
		if kw, err = proc.Start("kwok", filepath.Join(ref.Dir(), "logs", "kwok.log"), args...); err != nil {
			return fail(err)
		}
		for _, p := range ref.Processes() {
			c.procs = append(c.procs, procstat.Named{Name: p.Name, PID: p.PID})
		}
		c.procs = append(c.procs, procstat.Named{Name: "kwok", PID: kw.Cmd.Process.Pid})
		if c.client, err = driverClient(ref.Kubeconfig()); err != nil {
			return fail(err)
		}
		upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		if err := createKWOKNodes(upCtx, c.client, nodes); err != nil {
			return fail(err)
		}
		if err := waitNodesReady(upCtx, c.client, nodes); err != nil {
			return fail(fmt.Errorf("%s: %w (kwok alive: %v)", name, err, kw.Alive()))
		}
		c.startup = time.Since(begin)
		return c, nil
	}}
}

// createKWOKNodes creates n Nodes for KWOK, named as setpoint names its
// simulated nodes, with their capacity (32 CPUs, 256Gi, 110 pods) and a
// podCIDR each (KWOK gives pods addresses from it).
func createKWOKNodes(ctx context.Context, cs kubernetes.Interface, n int) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				name := "node-" + strconv.Itoa(i)
				node := &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{
						Name:        name,
						Annotations: map[string]string{kwokNodeAnnotation: "fake"},
						Labels: map[string]string{
							"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
							"kubernetes.io/arch": "amd64", "type": "kwok",
						},
					},
					Spec:   corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)},
					Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
				}
				if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- fmt.Errorf("create node %s: %w", name, err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

// waitNodesReady polls until n Nodes are Ready and carry no NoSchedule or
// NoExecute taint (the node lifecycle controller's not-ready taints gone).
func waitNodesReady(ctx context.Context, cs kubernetes.Interface, n int) error {
	last := ""
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			ready := 0
			for i := range list.Items {
				if nodeUsable(&list.Items[i]) {
					ready++
				}
			}
			if ready >= n {
				return nil
			}
			last = fmt.Sprintf("%d of %d nodes Ready and untainted (%d exist)", ready, n, len(list.Items))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes not ready: %s: %w", last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func nodeUsable(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
