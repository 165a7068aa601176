package controllermanager_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// The replicas' election and sharding timings. renewDeadline bounds how
// long a Lease write may take before a leader steps down (its manager then
// stops) and a shard lapses: under -race on a loaded 2-core machine the API
// server answered a renewal in more than 2 s, and a leader stopped before
// the test cut it off (3 runs in 5 with two CPU burners). Doubled from
// 3 s/2 s/250 ms, same ratios.
const (
	leaseDuration = 6 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

var (
	deployGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	nsGVR     = corev1.SchemeGroupVersion.WithResource("namespaces")
	leaseGVR  = coordinationv1.SchemeGroupVersion.WithResource("leases")
)

func testLogger() *slog.Logger {
	if os.Getenv("CM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// replica is one sharded controller manager reaching the API server
// through its own proxy.
type replica struct {
	id     string
	mgr    *manager.Manager
	proxy  *tcpproxy.Proxy
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func startReplica(t *testing.T, cfg *rest.Config, id string) *replica {
	t.Helper()
	p := tcpproxy.New(t, cfg.Host)
	c := *cfg
	c.Host = "https://" + p.Addr()
	c.MaxRetries = -1
	mgr, err := controllermanager.NewControllerManager(controllermanager.ControllerManagerOptions{
		Common: controllermanager.Common{Config: &c, Logger: testLogger().With("replica", id),
			Election: controllermanager.Election{Identity: id, LeaseDuration: leaseDuration,
				RenewDeadline: renewDeadline, RetryPeriod: retryPeriod}},
		Sharding: controllermanager.Sharding{Enabled: true, Shards: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: id, mgr: mgr, proxy: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	t.Cleanup(mgr.Client().CloseIdleConnections)
	return r
}

// stop cancels the replica and returns its manager's error (idempotent).
func (r *replica) stop(t *testing.T) error {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("replica %s did not stop", r.id)
		}
	})
	return r.err
}

// eventually polls cond every 100 ms until it returns "" or timeout
// passes; cond's last answer says what was still missing.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() string) time.Duration {
	t.Helper()
	return testwait.UntilEvery(t, timeout, 100*time.Millisecond, what, testwait.Reason(cond))
}

func deployment(ns string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// converged reports "" when every namespace's Deployment observed its
// generation and counts want replicas, else the first that does not.
func converged(c *rest.Client, nss []string, want int32) string {
	ds := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, deployGVR, true)
	for _, ns := range nss {
		d, err := ds.Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.ObservedGeneration != d.Generation || d.Status.Replicas != want || d.Status.UpdatedReplicas != want {
			return fmt.Sprintf("%s/web: generation %d observed %d, replicas %d updated %d (want %d)", ns, d.Generation,
				d.Status.ObservedGeneration, d.Status.Replicas, d.Status.UpdatedReplicas, want)
		}
	}
	return ""
}

// holders maps each Lease of kube-system whose name starts with prefix to
// its holder.
func holders(t *testing.T, c *rest.Client, prefix string) map[string]string {
	t.Helper()
	ls, err := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, leaseGVR, true).Namespace("kube-system").
		List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls.Items {
		if len(l.Name) >= len(prefix) && l.Name[:len(prefix)] == prefix && l.Spec.HolderIdentity != nil {
			out[l.Name] = *l.Spec.HolderIdentity
		}
	}
	return out
}

// runManagers starts the managers; the returned function stops them and
// reports the error any of them ended with.
func runManagers(t *testing.T, managers ...*manager.Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dones := make([]chan error, len(managers))
	for i, m := range managers {
		dones[i] = make(chan error, 1)
		go func() { dones[i] <- m.Start(ctx) }()
	}
	return func() {
		cancel()
		for _, d := range dones {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
	}
}
