package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// noReadyLabel on a pod template keeps the readiness helper away from its
// pods.
const noReadyLabel = "test.setpoint.dev/never-ready"

// harness is a real API server, a manager running this controller and the
// real ReplicaSet controller, a helper that marks pods Ready (there are no
// nodes), and a separate client for the test's reads and writes.
type harness struct {
	t        *testing.T
	r        *reconciler
	deploys  *rest.Resource[*appsv1.Deployment, *appsv1.DeploymentList]
	rss      *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	pods     *rest.Resource[*corev1.Pod, *corev1.PodList]
	events   *rest.Resource[*corev1.Event, *corev1.EventList]
	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	done     chan error
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, r, err := newController(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(&runnable{c: c, checks: r.checks}); err != nil {
		t.Fatal(err)
	}
	if err := replicaset.Add(mgr, replicaset.Options{}); err != nil {
		t.Fatal(err)
	}
	client := srv.RESTClient(t)
	h := &harness{t: t, r: r, done: make(chan error, 1),
		deploys: rest.For[*appsv1.Deployment, *appsv1.DeploymentList](client, deployGVR, true).Namespace(ns),
		rss:     rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](client, rsGVR, true).Namespace(ns),
		pods:    rest.For[*corev1.Pod, *corev1.PodList](client, podGVR, true).Namespace(ns),
		events:  rest.For[*corev1.Event, *corev1.EventList](client, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- mgr.Start(ctx) }()
	h.wg.Add(1)
	go func() { defer h.wg.Done(); h.markReadyLoop(ctx) }()
	t.Cleanup(func() {
		h.stop()
		mgr.Client().CloseIdleConnections()
	})
	return h
}

// stop stops the readiness helper and the manager and waits for them.
func (h *harness) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		h.wg.Wait()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			h.t.Error("manager did not stop")
		}
	})
}

// markReadyLoop plays the kubelet: every 20ms it marks Running and Ready,
// through the status subresource (16 writes at a time), the pods that are not yet ready (except
// those labelled noReadyLabel).
func (h *harness) markReadyLoop(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list, err := h.pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range list.Items {
			p := &list.Items[i]
			if p.DeletionTimestamp != nil || p.Labels[noReadyLabel] != "" || isReady(p) {
				continue
			}
			now := metav1.Now()
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				_, _ = h.pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}) // conflicts: next tick
			}()
		}
		wg.Wait()
	}
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// newDeployment is a RollingUpdate Deployment of n replicas.
func newDeployment(name string, n int32, image string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
			},
		},
	}
}

func withRolling(d *appsv1.Deployment, surge, unavailable intstr.IntOrString) *appsv1.Deployment {
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	return d
}

func (h *harness) create(d *appsv1.Deployment) *appsv1.Deployment {
	h.t.Helper()
	out, err := h.deploys.Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) get(name string) *appsv1.Deployment {
	h.t.Helper()
	d, err := h.deploys.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// mutate applies fn to the current Deployment, retrying on conflict.
func (h *harness) mutate(name string, fn func(*appsv1.Deployment)) *appsv1.Deployment {
	h.t.Helper()
	for range 50 {
		d := h.get(name)
		fn(d)
		out, err := h.deploys.Update(context.Background(), d, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
	}
	h.t.Fatalf("update of %s kept conflicting", name)
	return nil
}

func setImage(image string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = image }
}

// replicaSets lists the ReplicaSets controlled by the Deployment.
func (h *harness) replicaSets(d *appsv1.Deployment) []*appsv1.ReplicaSet {
	h.t.Helper()
	list, err := h.rss.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*appsv1.ReplicaSet
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == d.UID {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

// eventually polls cond every 20ms until it returns nil or 30s pass.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 30*time.Second, 20*time.Millisecond, what, cond)
}

// rolloutDone is kubectl rollout status's test: the current generation
// observed, every replica updated and available, no old replica left.
func rolloutDone(d *appsv1.Deployment) error {
	st := d.Status
	n := *d.Spec.Replicas
	if st.ObservedGeneration < d.Generation {
		return fmt.Errorf("observedGeneration %d < generation %d", st.ObservedGeneration, d.Generation)
	}
	if st.UpdatedReplicas != n || st.Replicas != st.UpdatedReplicas || st.AvailableReplicas != st.UpdatedReplicas {
		return fmt.Errorf("updated %d replicas %d available %d of %d", st.UpdatedReplicas, st.Replicas, st.AvailableReplicas, n)
	}
	return nil
}

// waitRollout waits until kubectl rollout status would report success and
// returns the Deployment.
func (h *harness) waitRollout(name string) *appsv1.Deployment {
	h.t.Helper()
	var d *appsv1.Deployment
	h.eventually("rollout of "+name, func() error {
		d = h.get(name)
		return rolloutDone(d)
	})
	return d
}

func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	return getCondition(d.Status, t)
}
