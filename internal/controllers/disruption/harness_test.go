package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

type harness struct {
	t    *testing.T
	ctx  context.Context
	srv  *testserver.Server
	pods *rest.Resource[*corev1.Pod, *corev1.PodList]
	pdbs *rest.Resource[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList]
	rss  *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	deps *rest.Resource[*appsv1.Deployment, *appsv1.DeploymentList]
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
	return &harness{t: t, ctx: context.Background(), srv: srv,
		pods: rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true).Namespace(ns),
		pdbs: rest.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c, pdbGVR, true).Namespace(ns),
		rss:  rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c, rsGVR, true).Namespace(ns),
		deps: rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, appsv1.SchemeGroupVersion.WithResource("deployments"), true).Namespace(ns),
	}
}

func (h *harness) eventually(what string, fn func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, fn)
}

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

// replicaSet creates a ReplicaSet of app (no controller runs: the test
// makes its pods), owned by owner when given.
func (h *harness) replicaSet(name, app string, replicas int32, owner *metav1.OwnerReference) *appsv1.ReplicaSet {
	h.t.Helper()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, Template: template(app)}}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	out, err := h.rss.Create(h.ctx, rs, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func controllerRef(apiVersion, kind string, obj metav1.Object) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: &yes}
}

// pod creates a pod of app on node n1, controlled by ref when given, and
// makes it Running and Ready (or not).
func (h *harness) pod(name, app string, ref *metav1.OwnerReference, ready bool) {
	h.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if ref != nil {
		p.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	out, err := h.pods.Create(h.ctx, p, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	out.Status.Phase = corev1.PodRunning
	out.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	if _, err := h.pods.UpdateStatus(h.ctx, out, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) budget(name, app string, minAvailable, maxUnavailable *intstr.IntOrString) {
	h.t.Helper()
	_, err := h.pdbs.Create(h.ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
}

// wantStatus waits for the budget's counts (expected, desired, current,
// allowed) at its generation, with the condition they imply.
func (h *harness) wantStatus(name string, expected, desired, current, allowed int32) *policyv1.PodDisruptionBudget {
	h.t.Helper()
	var got *policyv1.PodDisruptionBudget
	h.eventually("budget "+name, func() error {
		pdb, err := h.pdbs.Get(h.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s := pdb.Status
		if s.ObservedGeneration != pdb.Generation || s.ExpectedPods != expected || s.DesiredHealthy != desired ||
			s.CurrentHealthy != current || s.DisruptionsAllowed != allowed {
			return fmt.Errorf("status %+v, want expected %d desired %d current %d allowed %d", s, expected, desired, current, allowed)
		}
		reason, status := policyv1.InsufficientPodsReason, metav1.ConditionFalse
		if allowed > 0 {
			reason, status = policyv1.SufficientPodsReason, metav1.ConditionTrue
		}
		if len(s.Conditions) != 1 || s.Conditions[0].Reason != reason || s.Conditions[0].Status != status {
			return fmt.Errorf("conditions %+v, want %s %s", s.Conditions, status, reason)
		}
		got = pdb
		return nil
	})
	return got
}

// evict posts an eviction and returns the code and body.
func (h *harness) evict(pod string) (int, string) {
	h.t.Helper()
	code, body, _ := h.srv.Do(h.t, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/"+pod+"/eviction", "application/json",
		strings.NewReader(fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q}}`, pod)))
	return code, string(body)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
