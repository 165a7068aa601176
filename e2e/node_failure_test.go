package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

// tolerateNodeLoss is pod-spec YAML that tolerates an unreachable or
// not-ready node for 2 s (Kubernetes adds 300 s by default).
const tolerateNodeLoss = `      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
`

// TestUpNodeStopsHeartbeating: a node whose agent dies (SIGKILL) turns
// NotReady with the unreachable taint, and its pods are recreated on the
// other nodes.
func TestUpNodeStopsHeartbeating(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2, "--node-monitor-grace-period", "4s")
	edge := startProc(t, "edge node", "node", "--kubeconfig", cl.kubeconfig, "--nodes", "1", "--name-prefix", "edge-",
		"--node-lease-duration", "4s", "--node-lease-renew-interval", "1s")
	c := restClient(t, cl.kubeconfig)
	nodes := rest.For[*corev1.Node, *corev1.NodeList](c, corev1.SchemeGroupVersion.WithResource("nodes"), false)
	eventually(t, 60*time.Second, "edge-0 Ready", func() string {
		n, err := nodes.Get(context.Background(), "edge-0", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if nodeReady(n) != corev1.ConditionTrue {
			return "not Ready"
		}
		return ""
	})

	cl.kubectl(t, deploymentManifest("spread", 6, "nginx:1.25", tolerateNodeLoss), "apply", "-f", "-")
	pods := waitRunning(t, c, "default", "app=spread", 6, 90*time.Second)
	onEdge := 0
	for _, p := range pods {
		if p.Spec.NodeName == "edge-0" {
			onEdge++
		}
	}
	if onEdge == 0 {
		t.Fatalf("no pod was scheduled on edge-0: the scheduler did not spread 6 pods over 3 nodes")
	}

	edge.kill9()
	eventually(t, 60*time.Second, "edge-0 unreachable", func() string {
		n, err := nodes.Get(context.Background(), "edge-0", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if s := nodeReady(n); s != corev1.ConditionUnknown {
			return fmt.Sprintf("Ready=%s", s)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute {
				return ""
			}
		}
		return fmt.Sprintf("taints %v", n.Spec.Taints)
	})
	eventually(t, 90*time.Second, "pods replaced off edge-0", func() string {
		running := runningPods(t, c, "default", "app=spread")
		for _, p := range running {
			if p.Spec.NodeName == "edge-0" {
				return "a pod still counts as running on edge-0"
			}
		}
		if len(running) != 6 {
			return fmt.Sprintf("%d running", len(running))
		}
		return ""
	})
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// crashingPod is a pod whose simulated container exits with code 3 one
// second after every start (the node agent's setpoint.dev/crash-after);
// its run time is long, so that a pod meant to finish crashes first.
func crashingPod(name, restartPolicy string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  annotations: {setpoint.dev/crash-after: "1s", setpoint.dev/crash-exit-code: "3", setpoint.dev/run-time: "1h"}
spec:
  restartPolicy: %s
  containers:
  - {name: app, image: busybox:1.36}
`, name, restartPolicy)
}

// TestUpContainerCrashes: an injected crash restarts the container under
// restartPolicy Always (kubectl shows the restarts and the last exit code)
// and fails the pod under Never.
func TestUpContainerCrashes(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 1, "--container-restart-backoff", "300ms")
	cl.kubectl(t, crashingPod("always", "Always"), "apply", "-f", "-")
	cl.kubectl(t, crashingPod("never", "Never"), "apply", "-f", "-")
	eventually(t, 60*time.Second, "restarts under Always", func() string {
		out := cl.kubectl(t, "", "get", "pod", "always", "-o",
			"jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.exitCode}")
		var restarts, code int
		if _, err := fmt.Sscan(out, &restarts, &code); err != nil || restarts < 2 || code != 3 {
			return fmt.Sprintf("restartCount and last exit code %q", out)
		}
		return ""
	})
	eventually(t, 60*time.Second, "failed under Never", func() string {
		out := cl.kubectl(t, "", "get", "pod", "never", "-o",
			"jsonpath={.status.phase} {.status.containerStatuses[0].state.terminated.exitCode}")
		if out != "Failed 3" {
			return fmt.Sprintf("phase and exit code %q", out)
		}
		return ""
	})
}
