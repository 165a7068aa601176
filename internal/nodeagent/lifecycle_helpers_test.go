package nodeagent_test

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// forKind is a typed client of a namespaced core resource in default.
func forKind[T, L runtime.Object](e *env, resource string) *rest.Resource[T, L] {
	return rest.For[T, L](e.srv.RESTClient(e.t), schema.GroupVersionResource{Version: "v1", Resource: resource}, true).Namespace("default")
}

// create creates obj in default or fails the test.
func create[T, L runtime.Object](e *env, resource string, obj T) T {
	e.t.Helper()
	out, err := forKind[T, L](e, resource).Create(ctx(), obj, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create %s: %v", resource, err)
	}
	return out
}

// waitEvent waits for an event about the pod with the reason and message
// and returns it.
func (e *env) waitEvent(pod, reason, message string) corev1.Event {
	e.t.Helper()
	return e.waitEventMatch(pod, reason, func(m string) bool { return m == message })
}

// waitEventMatch waits for an event about the pod with the reason and a
// message match accepts.
func (e *env) waitEventMatch(pod, reason string, match func(string) bool) corev1.Event {
	e.t.Helper()
	evs := forKind[*corev1.Event, *corev1.EventList](e, "events")
	var found corev1.Event
	var seen []string
	testwait.UntilEvery(e.t, 20*time.Second, 20*time.Millisecond, "event "+reason+" about "+pod, func() error {
		l, err := evs.List(ctx(), metav1.ListOptions{})
		if err == nil {
			seen = seen[:0]
			for _, ev := range l.Items {
				if ev.InvolvedObject.Name != pod {
					continue
				}
				seen = append(seen, ev.Reason+": "+ev.Message)
				if ev.Reason == reason && match(ev.Message) {
					found = ev
					return nil
				}
			}
		}
		return fmt.Errorf("no matching event; saw:\n%s", strings.Join(seen, "\n"))
	})
	return found
}

// step advances the fake clock and gives the agent a moment.
func (e *env) step(d time.Duration) {
	e.clk.Step(d)
	time.Sleep(50 * time.Millisecond)
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, l := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range l {
			if l[i].Name == name {
				return &l[i]
			}
		}
	}
	return nil
}

func waitingReason(p *corev1.Pod, name string) string {
	if s := containerStatus(p, name); s != nil && s.State.Waiting != nil {
		return s.State.Waiting.Reason
	}
	return ""
}

func isRunning(p *corev1.Pod, name string) bool {
	s := containerStatus(p, name)
	return s != nil && s.State.Running != nil
}

func terminated(p *corev1.Pod, name string) *corev1.ContainerStateTerminated {
	if s := containerStatus(p, name); s != nil {
		return s.State.Terminated
	}
	return nil
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Status.Phase == ph }
}

func at(d time.Duration) time.Time { return epoch.Add(d) }

func sidecar(name, image string) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	return corev1.Container{Name: name, Image: image, RestartPolicy: &always}
}

func httpGet() corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}
}

func mustQty(s string) resource.Quantity { return resource.MustParse(s) }
