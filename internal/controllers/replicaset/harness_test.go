package replicaset

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// countingTransport counts the controller's pod creations (POSTs to pods)
// and can slow down the bodies of pod watch responses, so that the
// controller's pod informer lags behind the server.
type countingTransport struct {
	next http.RoundTripper
	// podPosts counts POST .../pods requests; postsInFlight and
	// maxInFlight are the POSTs under way and the most seen at once.
	podPosts                   atomic.Int64
	postsInFlight, maxInFlight atomic.Int64
	// watchDelay, when positive, delays every Read of a pod watch body
	// while delaying is set.
	watchDelay time.Duration
	delaying   atomic.Bool
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	podPath := strings.HasSuffix(req.URL.Path, "/pods")
	if req.Method == http.MethodPost && podPath {
		c.podPosts.Add(1)
		n := c.postsInFlight.Add(1)
		defer c.postsInFlight.Add(-1)
		for m := c.maxInFlight.Load(); n > m && !c.maxInFlight.CompareAndSwap(m, n); m = c.maxInFlight.Load() {
		}
		// Hold each create a little, so that concurrent ones overlap.
		time.Sleep(2 * time.Millisecond)
	}
	resp, err := c.next.RoundTrip(req)
	if err == nil && c.watchDelay > 0 && podPath && req.URL.Query().Get("watch") == "true" {
		resp.Body = &slowBody{ReadCloser: resp.Body, delay: c.watchDelay, on: &c.delaying}
	}
	return resp, err
}

type slowBody struct {
	io.ReadCloser
	delay time.Duration
	on    *atomic.Bool
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.on.Load() {
		time.Sleep(b.delay)
	}
	return b.ReadCloser.Read(p)
}

// harness is a real API server, a manager running the controller, and a
// separate client for the test's own reads and writes.
type harness struct {
	t         *testing.T
	transport *countingTransport
	mgr       *manager.Manager
	r         *reconciler
	pods      *rest.Resource[*corev1.Pod, *corev1.PodList]
	rss       *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	events    *rest.Resource[*corev1.Event, *corev1.EventList]
	stopOnce  sync.Once
	cancel    context.CancelFunc
	done      chan error
}

func newHarness(t *testing.T, opts Options, watchDelay time.Duration) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	tc := &countingTransport{next: srv.Client.Transport, watchDelay: watchDelay}
	mcfg := srv.RESTConfig(t)
	mcfg.Transport = tc
	mgr, err := manager.New(manager.Options{Config: mcfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler), NotRetried: []controller.ErrorClass{}}) // as the controller manager
	if err != nil {
		t.Fatal(err)
	}
	ctrl, r, err := newController(mgr, opts, ReplicaSetKind)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(ctrl); err != nil {
		t.Fatal(err)
	}
	c := srv.RESTClient(t)
	h := &harness{t: t, transport: tc, mgr: mgr, r: r, done: make(chan error, 1),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true).Namespace(ns),
		rss:    rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c, rsGVR, true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- mgr.Start(ctx) }()
	t.Cleanup(h.stop)
	if watchDelay > 0 {
		// Slow the pod watch down only once the informer has synced, so
		// that it lags in steady state rather than never syncing.
		h.eventually("pod informer synced", func() error {
			if !r.podInf.HasSynced() {
				return fmt.Errorf("not synced")
			}
			return nil
		})
		tc.delaying.Store(true)
	}
	return h
}

// stop stops the manager and waits for it.
func (h *harness) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			h.t.Error("manager did not stop")
		}
		h.mgr.Client().CloseIdleConnections()
	})
}

func newRS(name string, replicas int32) *appsv1.ReplicaSet {
	sel := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: map[string]string{"note": "from-template"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
			},
		},
	}
}

func (h *harness) create(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	h.t.Helper()
	out, err := h.rss.Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// mutate applies fn to the current ReplicaSet, retrying on conflict.
func (h *harness) mutate(name string, fn func(*appsv1.ReplicaSet)) *appsv1.ReplicaSet {
	h.t.Helper()
	for range 20 {
		rs, err := h.rss.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		fn(rs)
		out, err := h.rss.Update(context.Background(), rs, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
	}
	h.t.Fatalf("update of %s kept conflicting", name)
	return nil
}

func (h *harness) scale(name string, n int32) *appsv1.ReplicaSet {
	return h.mutate(name, func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = &n })
}

// activePods lists, from the server, the active pods controlled by rs.
func (h *harness) activePods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	h.t.Helper()
	list, err := h.pods.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == rs.UID && podutil.IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// eventually polls cond every 20ms until it returns nil or the deadline
// passes, then fails with its last error.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, cond)
}

// waitPods waits until rs controls exactly n active pods and its status
// reports them for its current generation.
func (h *harness) waitPods(name string, n int) []*corev1.Pod {
	h.t.Helper()
	var pods []*corev1.Pod
	h.eventually(fmt.Sprintf("%s with %d pods", name, n), func() error {
		rs, err := h.rss.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pods = h.activePods(rs)
		if len(pods) != n {
			return fmt.Errorf("%d active pods", len(pods))
		}
		if rs.Status.Replicas != int32(n) || rs.Status.ObservedGeneration != rs.Generation {
			return fmt.Errorf("status %+v at generation %d", rs.Status, rs.Generation)
		}
		return nil
	})
	return pods
}

// eventReasons returns the reasons of the events about the ReplicaSet.
func (h *harness) eventReasons(name string) map[string]int32 {
	h.t.Helper()
	list, err := h.events.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]int32{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "ReplicaSet" && e.InvolvedObject.Name == name {
			out[e.Reason] += max(e.Count, 1)
		}
	}
	return out
}
