package resourcequota

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// harness is a real API server, a manager running the controller, and a
// client for the test's own reads and writes.
type harness struct {
	t      *testing.T
	ctx    context.Context
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	cms    *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	quotas *rest.Resource[*corev1.ResourceQuota, *corev1.ResourceQuotaList]

	replicaSets *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
		mgr.Client().CloseIdleConnections()
	})
	c := srv.RESTClient(t)
	return &harness{t: t, ctx: context.Background(),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace(ns),
		cms:    rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace(ns),
		quotas: rest.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c, quotasGVR, true).Namespace(ns),
		replicaSets: rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c,
			appsv1.SchemeGroupVersion.WithResource("replicasets"), true).Namespace(ns),
	}
}

func (h *harness) eventually(what string, fn func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, fn)
}

func (h *harness) createQuota(name string, hard corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) {
	h.t.Helper()
	_, err := h.quotas.Create(h.ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes}}, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
}

// wantStatus waits until the quota's status is hard = spec.hard and used
// = want.
func (h *harness) wantStatus(name string, want corev1.ResourceList) {
	h.t.Helper()
	h.eventually("quota "+name+" status", func() error {
		q, err := h.quotas.Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !quota.Equal(q.Status.Hard, q.Spec.Hard) {
			return fmt.Errorf("status.hard %s, spec.hard %s", quota.String(q.Status.Hard), quota.String(q.Spec.Hard))
		}
		if !quota.Equal(q.Status.Used, want) {
			return fmt.Errorf("used %s, want %s", quota.String(q.Status.Used), quota.String(want))
		}
		return nil
	})
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func newPod(name, cpu string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = rl("cpu", cpu)
	}
	return p
}

// finish sets a pod's phase as its node would.
func (h *harness) finish(name string, phase corev1.PodPhase) error {
	p, err := h.pods.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = phase
	_, err = h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{})
	return err
}
