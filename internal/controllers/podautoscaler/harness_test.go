package podautoscaler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/deployment"
	"github.com/setpoint-dev/setpoint/internal/controllers/podautoscaler"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/scheduler"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

var (
	deployGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	hpaGVR    = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	eventGVR  = corev1.SchemeGroupVersion.WithResource("events")
	epoch     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// harness is a real server with simulated nodes, the scheduler, the
// workload controllers and the autoscaler on one fake clock (the nodes'
// time and the autoscaler's; the others keep real time).
type harness struct {
	*ctrltest.Env
	t      *testing.T
	ctx    context.Context
	clk    *clocktesting.FakeClock
	deps   *rest.Resource[*appsv1.Deployment, *appsv1.DeploymentList]
	hpas   *rest.Resource[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]
}

func newHarness(t *testing.T) *harness {
	clk := clocktesting.NewFakeClock(epoch)
	var agent *nodeagent.Agent
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		a, err := nodeagent.New(e.Mgr, nodeagent.Options{Count: 2, Clock: clk, ClientCA: e.Server.API.CA().CertPEM})
		if err != nil {
			return err
		}
		agent = a
		for _, add := range []func() error{
			func() error { return scheduler.Add(e.Mgr, scheduler.Options{}) },
			func() error { return replicaset.Add(e.Mgr, replicaset.Options{}) },
			func() error { return deployment.Add(e.Mgr, deployment.Options{}) },
			func() error { return podautoscaler.Add(e.Mgr, podautoscaler.Options{Clock: clk}) },
		} {
			if err := add(); err != nil {
				return err
			}
		}
		return nil
	})
	select {
	case <-agent.Registered():
	case <-time.After(30 * time.Second):
		t.Fatal("nodes not registered")
	}
	return &harness{Env: env, t: t, ctx: context.Background(), clk: clk,
		deps:   rest.For[*appsv1.Deployment, *appsv1.DeploymentList](env.Client, deployGVR, true).Namespace(ns),
		hpas:   rest.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](env.Client, hpaGVR, true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](env.Client, eventGVR, true).Namespace(ns),
	}
}

// createDeployment creates a Deployment of replicas pods requesting 100m
// cpu and using usage (the setpoint.dev/cpu-usage knob).
func (h *harness) createDeployment(name string, replicas int32, usage string) {
	h.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{nodeagent.AnnotationCPUUsage: usage}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
	if _, err := h.deps.Create(h.ctx, d, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	h.waitRunning(name, int(replicas))
}

// runningPods lists the Running pods of the app.
func (h *harness) runningPods(app string) []corev1.Pod {
	h.t.Helper()
	list, err := h.Pods(ns).List(h.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// waitRunning waits (real time) until n pods of the app run.
func (h *harness) waitRunning(app string, n int) {
	h.t.Helper()
	h.Eventually(fmt.Sprintf("%d pods of %s running", n, app), func() error {
		if got := len(h.runningPods(app)); got != n {
			return fmt.Errorf("%d running", got)
		}
		return nil
	})
}

// setUsage sets the cpu usage knob of the app's running pods.
func (h *harness) setUsage(app, usage string) {
	h.t.Helper()
	for _, p := range h.runningPods(app) {
		for range 10 {
			cur, err := h.Pods(ns).Get(h.ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				h.t.Fatal(err)
			}
			if cur.Annotations == nil {
				cur.Annotations = map[string]string{}
			}
			cur.Annotations[nodeagent.AnnotationCPUUsage] = usage
			if _, err = h.Pods(ns).Update(h.ctx, cur, metav1.UpdateOptions{}); err == nil {
				break
			}
		}
	}
	time.Sleep(200 * time.Millisecond) // the agent sees the new usage before time moves
}

// step advances the fake clock by d, in steps of at most 15 s (one sync
// period), letting each sync run.
func (h *harness) step(d time.Duration) {
	for d > 0 {
		s := min(d, 15*time.Second)
		h.clk.Step(s)
		d -= s
		time.Sleep(150 * time.Millisecond)
	}
}

// stepUntil advances the clock 15 s at a time until cond holds (at most
// maxSteps steps); it returns the fake time it took.
func (h *harness) stepUntil(what string, maxSteps int, cond func() error) time.Duration {
	h.t.Helper()
	start := h.clk.Now()
	err := testwait.PollStepping(h.t.Context(), maxSteps, 300*time.Millisecond, 20*time.Millisecond,
		func() { h.clk.Step(15 * time.Second) }, cond)
	if err != nil {
		h.t.Fatalf("%s: %v (after %s of simulated time)", what, err, h.clk.Now().Sub(start))
	}
	return h.clk.Now().Sub(start)
}

func (h *harness) hpa(name string) *autoscalingv2.HorizontalPodAutoscaler {
	h.t.Helper()
	a, err := h.hpas.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

func (h *harness) replicas(name string) int32 {
	h.t.Helper()
	d, err := h.deps.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// wantReplicas is a stepUntil condition on the Deployment's spec.replicas.
func (h *harness) wantReplicas(name string, n int32) func() error {
	return func() error {
		if got := h.replicas(name); got != n {
			return fmt.Errorf("%s has %d replicas, want %d", name, got, n)
		}
		return nil
	}
}

func condition(a *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range a.Status.Conditions {
		if a.Status.Conditions[i].Type == typ {
			return &a.Status.Conditions[i]
		}
	}
	return nil
}

// wantCondition is a stepUntil condition on one of the autoscaler's
// conditions.
func (h *harness) wantCondition(name string, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, message string) func() error {
	return func() error {
		c := condition(h.hpa(name), typ)
		if c == nil || c.Status != status || c.Reason != reason || (message != "" && c.Message != message) {
			return fmt.Errorf("%s condition %s: %+v, want %s %s %q", name, typ, c, status, reason, message)
		}
		return nil
	}
}

// eventMessages lists the messages of the autoscaler's events of reason.
func (h *harness) eventMessages(name, reason string) []string {
	h.t.Helper()
	list, err := h.events.List(h.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == reason {
			if e.Source.Component != podautoscaler.EventSource {
				h.t.Errorf("event %s from %q", e.Reason, e.Source.Component)
			}
			out = append(out, e.Message)
		}
	}
	return out
}

// wantEvent waits (real time) for an event of the autoscaler.
func (h *harness) wantEvent(name, reason, message string) {
	h.t.Helper()
	h.Eventually("event "+reason+" "+message, func() error {
		msgs := h.eventMessages(name, reason)
		for _, m := range msgs {
			if m == message {
				return nil
			}
		}
		return fmt.Errorf("events %s: %s", reason, strings.Join(msgs, " | "))
	})
}

func cpuTarget(util int32) []autoscalingv2.MetricSpec {
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util}}}}
}

func (h *harness) createHPA(name, target string, minR, maxR int32, metrics []autoscalingv2.MetricSpec, b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
	h.t.Helper()
	a := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
			MinReplicas:    &minR, MaxReplicas: maxR, Metrics: metrics, Behavior: b}}
	if _, err := h.hpas.Create(h.ctx, a, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }
