package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/cluster"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/rest"
)

// BenchmarkDeploymentToRunning is the cluster benchmark: a whole
// cluster in this process (API server on the durable bolt store,
// controller manager, scheduler, 100 simulated nodes), one Deployment of
// 10,000 replicas applied, timed until every pod is Running and Ready as
// seen by a watch. It reports the seconds to all created, all bound and all
// Running, and pods/s to Running.
//
//	go test -run '^$' -bench DeploymentToRunning -benchtime 1x -count 3 ./bench
func BenchmarkDeploymentToRunning(b *testing.B) {
	const replicas, nodes = 10000, 100
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := startCluster(b, nodes)
		client, err := rest.New(c.Config)
		if err != nil {
			b.Fatal(err)
		}
		w := newPodProgress(b, client, replicas)
		deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](client, appsv1.SchemeGroupVersion.WithResource("deployments"), true)
		b.StartTimer()
		start := time.Now()
		if _, err := deploys.Namespace("default").Create(context.Background(), benchDeployment(replicas), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		created, bound, running := w.wait(b, start, 5*time.Minute)
		b.StopTimer()
		b.ReportMetric(created.Seconds(), "s-created")
		b.ReportMetric(bound.Seconds(), "s-bound")
		b.ReportMetric(running.Seconds(), "s-running")
		b.ReportMetric(float64(replicas)/running.Seconds(), "pods/s")
		client.CloseIdleConnections()
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

func startCluster(b *testing.B, nodes int) *cluster.Cluster {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// SETPOINT_BENCH_LOG=path keeps the cluster's debug log, for looking
	// into a slow run.
	var out io.Writer = io.Discard
	level := slog.LevelInfo
	if path := os.Getenv("SETPOINT_BENCH_LOG"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		out, level = f, slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	c, err := cluster.Start(context.Background(), cluster.Options{
		APIServer: controlplane.Options{DataDir: b.TempDir(), Listen: addr, Storage: controlplane.StorageBolt},
		Nodes:     nodes, Logger: log,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx, nil); err != nil {
		b.Fatal(err)
	}
	return c
}

func benchDeployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "bench"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "nginx:1.25",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
					}},
				}}},
			},
		},
	}
}

// podProgress watches every pod and records when the n-th was created,
// bound and Running+Ready.
type podProgress struct {
	n      int
	events <-chan watch.Event
	stop   func()
}

func newPodProgress(b *testing.B, c *rest.Client, n int) *podProgress {
	pods := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true)
	list, err := pods.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := pods.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	return &podProgress{n: n, events: w.ResultChan(), stop: w.Stop}
}

func (p *podProgress) wait(b *testing.B, start time.Time, timeout time.Duration) (created, bound, running time.Duration) {
	defer p.stop()
	seen, isBound, isRunning := map[string]bool{}, map[string]bool{}, map[string]bool{}
	deadline := time.After(timeout)
	for created == 0 || bound == 0 || running == 0 {
		select {
		case ev, ok := <-p.events:
			if !ok {
				b.Fatal("pod watch closed")
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			seen[pod.Name] = true
			if pod.Spec.NodeName != "" {
				isBound[pod.Name] = true
			}
			if pod.Status.Phase == corev1.PodRunning && ready(pod) {
				isRunning[pod.Name] = true
			}
			now := time.Since(start)
			if created == 0 && len(seen) >= p.n {
				created = now
			}
			if bound == 0 && len(isBound) >= p.n {
				bound = now
			}
			if running == 0 && len(isRunning) >= p.n {
				running = now
			}
		case <-deadline:
			b.Fatal(fmt.Sprintf("after %s: %d created, %d bound, %d running", timeout, len(seen), len(isBound), len(isRunning)))
		}
	}
	return created, bound, running
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
