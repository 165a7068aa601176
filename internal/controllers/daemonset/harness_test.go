package daemonset

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// harness is a real API server, the controller on a manager whose
// controller clock is fake, and the test's own clients. Its kubelet loop
// plays scheduler, kubelet and pod GC: it binds each unbound daemon pod to
// the node its affinity names, reports bound pods Running and Ready (with
// the fake clock's time), finishes the deletion of bound pods, and removes
// pods of nodes that are gone.
type harness struct {
	t      *testing.T
	srv    *testserver.Server
	clock  *clocktesting.FakeClock
	client *rest.Client
	dss    *rest.Resource[*appsv1.DaemonSet, *appsv1.DaemonSetList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes  *rest.Resource[*corev1.Node, *corev1.NodeList]
	crs    *rest.Resource[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]

	// mu guards unready and the controller's run.
	mu sync.Mutex
	// unready holds pods (by name) the kubelet reports not ready.
	unready map[string]bool
	run     *controllerRun

	stopKubelet func()
	// slow, when set, delays every read of the controller's pod watch
	// bodies by watchDelay, so that its cache lags behind the server.
	slow       atomic.Bool
	watchDelay time.Duration
}

// slowTransport delays the bodies of pod watches while on is set.
type slowTransport struct {
	next  http.RoundTripper
	delay time.Duration
	on    *atomic.Bool
}

func (s *slowTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err == nil && strings.HasSuffix(req.URL.Path, "/pods") && req.URL.Query().Get("watch") == "true" {
		resp.Body = &slowBody{ReadCloser: resp.Body, delay: s.delay, on: s.on}
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

// controllerRun is one manager running the controller.
type controllerRun struct {
	mgr    *manager.Manager
	r      *reconciler
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t *testing.T) *harness { return newLaggingHarness(t, 0) }

// newLaggingHarness is newHarness whose controller's pod watch can be
// slowed down by watchDelay per read (see harness.slow).
func newLaggingHarness(t *testing.T, watchDelay time.Duration) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	c := srv.RESTClient(t)
	h := &harness{
		t: t, srv: srv, client: c, clock: clocktesting.NewFakeClock(time.Now()), unready: map[string]bool{}, watchDelay: watchDelay,
		dss:    rest.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](c, dsGVR, true).Namespace(ns),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true).Namespace(ns),
		nodes:  rest.For[*corev1.Node, *corev1.NodeList](c, nodeGVR, false),
		crs:    rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c, crGVR, true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	h.startController()
	t.Cleanup(h.stopController)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	wake := make(chan struct{}, 1)
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { h.signalOnChange(ctx, h.pods.Watch, wake) })
		wg.Go(func() { h.signalOnChange(ctx, h.nodes.Watch, wake) })
		for ctx.Err() == nil {
			h.kubeletPass(ctx)
			select {
			case <-ctx.Done():
			case <-wake:
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	h.stopKubelet = func() { cancel(); <-done }
	t.Cleanup(h.stopKubelet)
	return h
}

// signalOnChange watches with open (again whenever the watch ends) and
// signals wake at every event, until ctx ends.
func (h *harness) signalOnChange(ctx context.Context, open func(context.Context, metav1.ListOptions) (watch.Interface, error), wake chan<- struct{}) {
	for ctx.Err() == nil {
		w, err := open(ctx, metav1.ListOptions{})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for range w.ResultChan() {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		w.Stop()
	}
}

// startController starts a new manager running the controller.
func (h *harness) startController() {
	h.t.Helper()
	mcfg := h.srv.RESTConfig(h.t)
	if h.watchDelay > 0 {
		mcfg.Transport = &slowTransport{next: h.srv.Client.Transport, delay: h.watchDelay, on: &h.slow}
	}
	mgr, err := manager.New(manager.Options{Config: mcfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		h.t.Fatal(err)
	}
	c, r, err := newController(mgr, Options{Clock: h.clock})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := mgr.Add(&runnable{c: c, r: r}); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &controllerRun{mgr: mgr, r: r, cancel: cancel, done: make(chan error, 1)}
	go func() { run.done <- mgr.Start(ctx) }()
	h.eventually("controller caches synced", func() error {
		if !r.dsInf.HasSynced() || !r.podInf.HasSynced() || !r.nodeInf.HasSynced() || !r.crInf.HasSynced() {
			return fmt.Errorf("not synced")
		}
		return nil
	})
	h.mu.Lock()
	h.run = run
	h.mu.Unlock()
}

// stopController stops the running manager, if any, and waits for it.
func (h *harness) stopController() {
	h.mu.Lock()
	run := h.run
	h.run = nil
	h.mu.Unlock()
	if run == nil {
		return
	}
	run.cancel()
	select {
	case err := <-run.done:
		if err != nil {
			h.t.Errorf("manager: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Error("manager did not stop")
	}
	run.mgr.Client().CloseIdleConnections()
}

// restartController is a controller manager restart: a new process with
// empty caches and expectations.
func (h *harness) restartController() {
	h.stopController()
	h.startController()
}

// setUnready makes the kubelet report pod name not ready (or ready again).
func (h *harness) setUnready(name string, unready bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if unready {
		h.unready[name] = true
	} else {
		delete(h.unready, name)
	}
}

func (h *harness) isUnready(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unready[name]
}

// kubeletPass makes one pass over the pods as scheduler, kubelet and pod
// GC. Errors (conflicts, pods gone) are left to the next pass.
func (h *harness) kubeletPass(ctx context.Context) {
	// Pods first, then nodes: a pod's node, created before the pod, is
	// then always in the node list. The other order let a pass that
	// listed the nodes just before a test added one delete the pod the
	// test then bound there as a pod of a missing node.
	pods, err := h.pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nodes, err := h.nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	exists := map[string]bool{}
	for _, n := range nodes.Items {
		exists[n.Name] = true
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.Spec.NodeName != "" && (p.DeletionTimestamp != nil || !exists[p.Spec.NodeName]):
			uid := p.UID
			_ = h.pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64),
				Preconditions: &metav1.Preconditions{UID: &uid}})
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName == "":
			if node := targetNode(p); exists[node] {
				_ = h.bind(ctx, p, node)
			}
		case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		default:
			h.report(ctx, p, !h.isUnready(p.Name))
		}
	}
}

// report writes Running and the Ready condition (ready or not) unless the
// pod already says so; the transition time is the fake clock's.
func (h *harness) report(ctx context.Context, p *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == status && p.Status.Phase == corev1.PodRunning {
			return
		}
	}
	cp := p.DeepCopy()
	cp.Status.Phase = corev1.PodRunning
	cp.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status,
		LastTransitionTime: metav1.NewTime(h.clock.Now())}}
	_, _ = h.pods.UpdateStatus(ctx, cp, metav1.UpdateOptions{})
}

// setPhase sets a pod's phase (Failed or Succeeded) as the kubelet would.
func (h *harness) setPhase(name string, phase corev1.PodPhase) {
	h.t.Helper()
	for range 20 {
		p, err := h.pods.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		p.Status.Phase = phase
		p.Status.Conditions = nil
		if _, err = h.pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	h.t.Fatalf("set phase of %s kept failing", name)
}

// bind posts pods/<name>/binding to node, as the scheduler does.
func (h *harness) bind(ctx context.Context, p *corev1.Pod, node string) error {
	b := &corev1.Binding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods/" + p.Name + "/binding"}
	_, err = rest.Dynamic(h.client, gvr, true).Namespace(p.Namespace).Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{})
	return err
}

// addNode creates a node with labels and taints.
func (h *harness) addNode(name string, labels map[string]string, taints ...corev1.Taint) {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	if _, err := h.nodes.Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// mutateNode applies fn to a node, retrying on conflict.
func (h *harness) mutateNode(name string, fn func(*corev1.Node)) {
	h.t.Helper()
	for range 20 {
		n, err := h.nodes.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		fn(n)
		if _, err = h.nodes.Update(context.Background(), n, metav1.UpdateOptions{}); err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			h.t.Fatal(err)
		}
	}
	h.t.Fatalf("update of node %s kept conflicting", name)
}

func (h *harness) deleteNode(name string) {
	h.t.Helper()
	if err := h.nodes.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// newDS returns a DaemonSet selecting app=name, rolling with
// maxUnavailable 1 unless the caller changes it.
func newDS(name string) *appsv1.DaemonSet {
	sel := map[string]string{"app": name}
	one := intstr.FromInt32(1)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one}},
		},
	}
}

func (h *harness) create(ds *appsv1.DaemonSet) *appsv1.DaemonSet {
	h.t.Helper()
	out, err := h.dss.Create(context.Background(), ds, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// mutate applies fn to the current DaemonSet, retrying on conflict.
func (h *harness) mutate(name string, fn func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	h.t.Helper()
	for range 20 {
		ds, err := h.dss.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		fn(ds)
		out, err := h.dss.Update(context.Background(), ds, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
		if !apierrors.IsConflict(err) {
			h.t.Fatal(err)
		}
	}
	h.t.Fatalf("update of %s kept conflicting", name)
	return nil
}

// livePods lists the pods of ds (by controller UID) not being deleted.
func (h *harness) livePods(ds *appsv1.DaemonSet) []*corev1.Pod {
	h.t.Helper()
	list, err := h.pods.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == ds.UID && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// eventually polls cond every 20ms until it returns nil or 20s pass.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, cond)
}

// eventReasons counts the events about DaemonSet name, by reason.
func (h *harness) eventReasons(name string) map[string]int32 {
	h.t.Helper()
	list, err := h.events.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]int32{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "DaemonSet" && e.InvolvedObject.Name == name {
			out[e.Reason] += max(e.Count, 1)
		}
	}
	return out
}

// podsByNode maps node name to the live pods of ds bound there.
func podsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		out[targetNode(p)] = append(out[targetNode(p)], p)
	}
	return out
}

// waitSettled waits until ds has exactly one live, bound, ready pod of its
// current template on each node in want and none elsewhere, and its status
// says so for its generation.
func (h *harness) waitSettled(name string, want ...string) *appsv1.DaemonSet {
	h.t.Helper()
	var ds *appsv1.DaemonSet
	h.eventually(fmt.Sprintf("%s settled on %v", name, want), func() error {
		var err error
		if ds, err = h.dss.Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		byNode := podsByNode(h.livePods(ds))
		if len(byNode) != len(want) {
			return fmt.Errorf("pods on %d nodes, want %d: %v", len(byNode), len(want), keys(byNode))
		}
		for _, n := range want {
			pods := byNode[n]
			if len(pods) != 1 {
				return fmt.Errorf("%d pods on %s", len(pods), n)
			}
			p := pods[0]
			if p.Spec.NodeName != n || p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s not running on %s", p.Name, n)
			}
		}
		st, w := ds.Status, int32(len(want))
		if ds.Status.ObservedGeneration != ds.Generation || st.DesiredNumberScheduled != w || st.CurrentNumberScheduled != w ||
			st.NumberReady != w || st.NumberAvailable != w || st.UpdatedNumberScheduled != w || st.NumberMisscheduled != 0 ||
			st.NumberUnavailable != 0 {
			return fmt.Errorf("status %+v at generation %d", st, ds.Generation)
		}
		return nil
	})
	return ds
}

func keys(m map[string][]*corev1.Pod) []string { return sortedKeys(m) }
