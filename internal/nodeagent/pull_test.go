package nodeagent_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// A node told it cannot pull an image keeps the pod Pending and unready
// with the kubelet's ErrImagePull / ImagePullBackOff states and events,
// tries again when the back-off ends, and runs the pod's other images.
func TestUnpullableImage(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgent(nodeagent.Options{Count: 1, UnpullableImages: []string{"*:404"}})
	e.createBound(newPod("bad", corev1.RestartPolicyAlways, "app=webserver:404", "side=nginx"), "node-0")
	e.createBound(newPod("good", corev1.RestartPolicyAlways, "app=webserver:1"), "node-0")

	e.waitPod("good", "running", running)
	e.waitPod("bad", "pull failed", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "ErrImagePull" })
	e.step(time.Second) // the kubelet's next look at the pod
	p := e.waitPod("bad", "backing off", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "ImagePullBackOff" })
	if p.Status.Phase != corev1.PodPending || podReady(p) || !isRunning(p, "side") {
		t.Errorf("phase %s ready %v side running %v", p.Status.Phase, podReady(p), isRunning(p, "side"))
	}
	if c := podCondition(p, corev1.ContainersReady); c == nil || c.Status != corev1.ConditionFalse ||
		c.Message != "containers with unready status: [app]" {
		t.Errorf("ContainersReady %+v", c)
	}
	msg := containerStatus(p, "app").State.Waiting.Message
	if !strings.HasPrefix(msg, `Back-off pulling image "webserver:404": ErrImagePull: rpc error: code = NotFound`) {
		t.Errorf("waiting message %q", msg)
	}
	e.waitEventMatch("bad", "Failed", func(m string) bool { return strings.HasPrefix(m, `Failed to pull image "webserver:404": `) })
	e.waitEvent("bad", "Failed", "Error: ErrImagePull")
	e.waitEvent("bad", "BackOff", `Back-off pulling image "webserver:404"`)
	e.waitEvent("bad", "Failed", "Error: ImagePullBackOff")

	// At the end of the 10s back-off (9s later) the pull is tried again (the
	// recorder counts the repeated event).
	e.step(9 * time.Second)
	e.waitEventMatch("bad", "Pulling", func(string) bool {
		evs, err := forKind[*corev1.Event, *corev1.EventList](e, "events").List(ctx(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "bad" && ev.Reason == "Pulling" && ev.Message == `Pulling image "webserver:404"` && ev.Count >= 2 {
				return true
			}
		}
		return false
	})
}
