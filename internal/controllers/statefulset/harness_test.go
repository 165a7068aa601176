package statefulset

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// harness is a real API server, a manager running the controller (which
// can be restarted), a fake clock for availability, and the test's own
// client, which also plays the kubelet: it sets pods' phase and Ready
// condition.
type harness struct {
	t      *testing.T
	srv    *testserver.Server
	clock  *clocktesting.FakeClock
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	sets   *rest.Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList]
	pvcs   *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	revs   *rest.Resource[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]

	mu     sync.Mutex
	r      *reconciler
	cancel context.CancelFunc
	done   chan error
	mgr    *manager.Manager
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	c := srv.RESTClient(t)
	h := &harness{t: t, srv: srv, clock: clocktesting.NewFakeClock(time.Now()),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true).Namespace(ns),
		sets:   rest.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c, setGVR, true).Namespace(ns),
		pvcs:   rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcGVR, true).Namespace(ns),
		revs:   rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c, revGVR, true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	h.start()
	t.Cleanup(h.stop)
	return h
}

// start runs a new manager with a new controller.
func (h *harness) start() {
	h.t.Helper()
	mgr, err := manager.New(manager.Options{Config: h.srv.RESTConfig(h.t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		h.t.Fatal(err)
	}
	ctrl, r, err := newController(mgr, Options{Clock: h.clock})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := mgr.Add(ctrl); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	h.mu.Lock()
	h.r, h.cancel, h.done, h.mgr = r, cancel, done, mgr
	h.mu.Unlock()
}

// stop stops the running manager, if any, and waits for it.
func (h *harness) stop() {
	h.mu.Lock()
	cancel, done, mgr := h.cancel, h.done, h.mgr
	h.cancel = nil
	h.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			h.t.Errorf("manager: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Error("manager did not stop")
	}
	mgr.Client().CloseIdleConnections()
}

// restart stops the controller manager and starts a fresh one (new
// caches, no expectations): a controller restart.
func (h *harness) restart() {
	h.stop()
	h.start()
}

func newSet(name string, replicas int32, policy appsv1.PodManagementPolicyType) *appsv1.StatefulSet {
	sel := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         name + "-svc",
			PodManagementPolicy: policy,
			Selector:            &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: map[string]string{"note": "v1"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			},
		},
	}
}

func (h *harness) create(set *appsv1.StatefulSet) *appsv1.StatefulSet {
	h.t.Helper()
	out, err := h.sets.Create(context.Background(), set, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// mutate applies fn to the current set, retrying on conflict.
func (h *harness) mutate(name string, fn func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	h.t.Helper()
	for range 20 {
		set, err := h.sets.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		fn(set)
		out, err := h.sets.Update(context.Background(), set, metav1.UpdateOptions{})
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

func (h *harness) scale(name string, n int32) {
	h.mutate(name, func(s *appsv1.StatefulSet) { s.Spec.Replicas = &n })
}

func (h *harness) setImage(name, image string) {
	h.mutate(name, func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = image })
}

// poke changes an annotation of the set: a sync, nothing else.
func (h *harness) poke(name string) {
	h.mutate(name, func(s *appsv1.StatefulSet) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["poke"] = fmt.Sprint(time.Now().UnixNano())
	})
}

// podsOf lists the pods of set name (by name prefix), sorted by ordinal.
func (h *harness) podsOf(name string) []*corev1.Pod {
	h.t.Helper()
	list, err := h.pods.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if parent, o := parentAndOrdinal(p); parent == name && o >= 0 {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ordinalOf(out[i]) < ordinalOf(out[j]) })
	return out
}

func names(pods []*corev1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.Name)
	}
	return strings.Join(s, ",")
}

// setPodStatus sets pod's phase and Ready condition (the test is the
// kubelet); a change of readiness takes the fake clock's time.
func (h *harness) setPodStatus(name string, phase corev1.PodPhase, ready bool) error {
	ctx := context.Background()
	for range 10 {
		p, err := h.pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		cond := corev1.PodCondition{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(h.clock.Now())}
		p.Status.Phase = phase
		found := false
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				if p.Status.Conditions[i].Status != st {
					p.Status.Conditions[i] = cond
				}
				found = true
			}
		}
		if !found {
			p.Status.Conditions = append(p.Status.Conditions, cond)
		}
		_, err = h.pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("status of %s kept conflicting", name)
}

// readyAll marks every not-yet-running, not terminating pod of set name
// Running and Ready.
func (h *harness) readyAll(name string) {
	h.t.Helper()
	for _, p := range h.podsOf(name) {
		if p.DeletionTimestamp == nil && !isRunningAndReady(p) {
			if err := h.setPodStatus(p.Name, corev1.PodRunning, true); err != nil && !apierrors.IsNotFound(err) {
				h.t.Fatal(err)
			}
		}
	}
}

// eventually polls cond every 50ms until it returns nil or 45 s pass.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 45*time.Second, 50*time.Millisecond, what, cond)
}

// settle keeps marking pods ready until the set's status shows the whole
// spec rolled out: replicas ready, all at the update revision, the
// rollout complete, for the current generation.
func (h *harness) settle(name string) *appsv1.StatefulSet {
	h.t.Helper()
	var set *appsv1.StatefulSet
	h.eventually(name+" settled", func() error {
		h.readyAll(name)
		var err error
		set, err = h.sets.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n := *set.Spec.Replicas
		st := set.Status
		if st.ObservedGeneration != set.Generation || st.Replicas != n || st.ReadyReplicas != n ||
			st.UpdatedReplicas != n || st.CurrentRevision != st.UpdateRevision || st.CurrentReplicas != n {
			return fmt.Errorf("status %+v at generation %d", st, set.Generation)
		}
		return nil
	})
	return set
}

// eventMessages returns the messages of the events about set name, by
// reason.
func (h *harness) eventMessages(name string) map[string][]string {
	h.t.Helper()
	list, err := h.events.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "StatefulSet" && e.InvolvedObject.Name == name {
			out[e.Reason] = append(out[e.Reason], e.Message)
		}
	}
	return out
}
