package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// simulatedRefusal is what the simulated nodes answer exec, attach and
// port-forward, which kubectl prints as its error.
const simulatedRefusal = "it is a node simulated by setpoint, whose containers do not run"

const crashyPod = `apiVersion: v1
kind: Pod
metadata:
  name: crashy
  annotations:
    setpoint.dev/crash-after: 5s
    setpoint.dev/crash-exit-code: "2"
spec:
  nodeName: node-0
  containers:
  - {name: app, image: busybox}
  - {name: side, image: nginx}
`

// podOf reads a pod through the API.
func podOf(t *testing.T, cl *upCluster, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := podsOf(restClient(t, cl.kubeconfig)).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

// TestKubectlLogsExecDebug runs kubectl's pod subcommands against `setpoint
// up`: logs (-c, --previous, --tail, -f) show the simulated containers'
// lives; exec, attach, port-forward and cp fail with the simulated node's
// message; debug adds an ephemeral container, fails to attach and shows
// its log instead.
func TestKubectlLogsExecDebug(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2, "--container-restart-backoff", "1s")
	cl.kubectl(t, crashyPod, "apply", "-f", "-")
	eventually(t, 30*time.Second, "crashy running", func() string {
		if p := podOf(t, cl, "crashy"); p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 2 {
			return string(p.Status.Phase)
		}
		return ""
	})

	t.Run("logs", func(t *testing.T) {
		if out := cl.kubectl(t, "", "logs", "crashy", "-c", "side"); out != "[setpoint] container side started: image nginx (simulated, nothing runs)\n" {
			t.Errorf("logs -c side:\n%s", out)
		}
		_, errOut, err := cl.kubectlErr(t, "", "get", "--raw", "/api/v1/namespaces/default/pods/crashy/log")
		if err == nil || !strings.Contains(errOut, "a container name must be specified for pod crashy, choose one of: [app side]") {
			t.Errorf("log without a container: %v %s", err, errOut)
		}
		// -f follows the running instance until it crashes.
		out := cl.kubectl(t, "", "logs", "-f", "crashy", "-c", "app")
		if !strings.Contains(out, "[setpoint] container app exited with code 2 (Error)\n") {
			t.Errorf("logs -f:\n%s", out)
		}
		eventually(t, 30*time.Second, "app restarted", func() string {
			p := podOf(t, cl, "crashy")
			if cs := p.Status.ContainerStatuses[0]; cs.RestartCount < 1 || cs.State.Running == nil {
				return fmt.Sprintf("restarts %d", cs.RestartCount)
			}
			return ""
		})
		if out := cl.kubectl(t, "", "logs", "crashy", "-c", "app"); !strings.HasPrefix(out, "[setpoint] container app restarted (restart ") {
			t.Errorf("logs after a restart:\n%s", out)
		}
		prev := cl.kubectl(t, "", "logs", "crashy", "-c", "app", "--previous")
		if lines := strings.Split(strings.TrimSpace(prev), "\n"); len(lines) != 2 || lines[1] != "[setpoint] container app exited with code 2 (Error)" {
			t.Errorf("logs --previous:\n%s", prev)
		}
		if out := cl.kubectl(t, "", "logs", "crashy", "-c", "app", "--previous", "--tail=1"); out != "[setpoint] container app exited with code 2 (Error)\n" {
			t.Errorf("logs --previous --tail=1:\n%s", out)
		}
		_, errOut, err = cl.kubectlErr(t, "", "logs", "crashy", "-c", "side", "--previous")
		if err == nil || !strings.Contains(errOut, `previous terminated container "side" in pod "crashy" not found`) {
			t.Errorf("logs --previous of a container that never restarted: %v %s", err, errOut)
		}
	})

	t.Run("exec, attach, port-forward and cp fail with the simulated node's message", func(t *testing.T) {
		for _, args := range [][]string{
			{"exec", "crashy", "-c", "side", "--", "ls"},
			{"exec", "-i", "crashy", "-c", "side", "--", "sh"},
			{"attach", "crashy", "-c", "side"},
			{"port-forward", "crashy", "18080:80"},
			{"cp", "crashy:/etc/hosts", t.TempDir() + "/hosts", "-c", "side"},
		} {
			_, errOut, err := cl.kubectlErr(t, "", args...)
			if err == nil || !strings.Contains(errOut, simulatedRefusal) || strings.Contains(errOut, "panic") {
				t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut)
			}
		}
	})

	t.Run("debug", func(t *testing.T) {
		out, errOut, err := cl.kubectlErr(t, "", "debug", "-it", "crashy", "--image=busybox", "--container=debugger")
		if err != nil || strings.Contains(errOut, "panic") {
			t.Fatalf("kubectl debug: %v\nstdout: %s\nstderr: %s", err, out, errOut)
		}
		if !strings.Contains(errOut, "couldn't attach to pod/crashy, falling back to streaming logs") || !strings.Contains(errOut, simulatedRefusal) ||
			out != "[setpoint] container debugger started: image busybox (simulated, nothing runs)\n" {
			t.Errorf("kubectl debug:\nstdout: %s\nstderr: %s", out, errOut)
		}
		p := podOf(t, cl, "crashy")
		if len(p.Spec.EphemeralContainers) != 1 || p.Spec.EphemeralContainers[0].Name != "debugger" ||
			len(p.Status.EphemeralContainerStatuses) != 1 || p.Status.EphemeralContainerStatuses[0].State.Running == nil {
			t.Errorf("ephemeral containers %+v, statuses %+v", p.Spec.EphemeralContainers, p.Status.EphemeralContainerStatuses)
		}
	})
}

// TestKubectlDrain drains a simulated node with kubectl: its pods are
// evicted; a PodDisruptionBudget (its status written by the disruption
// controller) holds the drain until a second healthy pod lets it allow one.
func TestKubectlDrain(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2)
	for _, name := range []string{"a", "b", "guarded"} {
		cl.kubectl(t, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {app: %s}\nspec:\n  nodeName: node-0\n  containers:\n  - {name: c, image: busybox}\n", name, name),
			"apply", "-f", "-")
	}
	cl.kubectl(t, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: elsewhere\nspec:\n  nodeName: node-1\n  containers:\n  - {name: c, image: busybox}\n", "apply", "-f", "-")
	waitRunning(t, restClient(t, cl.kubeconfig), "default", "", 4, 30*time.Second)
	cl.kubectl(t, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: guard\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels: {app: guarded}\n",
		"apply", "-f", "-")
	// The disruption controller writes the budget's status: one healthy
	// pod of at least one allows no disruption.
	eventually(t, 30*time.Second, "the budget's status", func() string {
		out := cl.kubectl(t, "", "get", "pdb", "guard", "-o", "jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}")
		if out != "1/0" {
			return "currentHealthy/disruptionsAllowed " + out
		}
		return ""
	})
	out, errOut, err := cl.kubectlErr(t, "", "drain", "node-0", "--force", "--timeout=12s")
	if err == nil || !strings.Contains(out+errOut, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("drain with a budget allowing no disruption: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if p := podOf(t, cl, "guarded"); p.DeletionTimestamp != nil {
		t.Fatal("the guarded pod was deleted")
	}
	drained := out // what the drains print
	// A second guarded pod elsewhere: two healthy of at least one allow
	// one disruption, and the drain goes through.
	cl.kubectl(t, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: guarded-2\n  labels: {app: guarded}\nspec:\n  nodeName: node-1\n  containers:\n  - {name: c, image: busybox}\n",
		"apply", "-f", "-")
	out = cl.kubectl(t, "", "drain", "node-0", "--force", "--timeout=60s")
	drained += out
	for _, name := range []string{"a", "b", "guarded"} {
		if !strings.Contains(drained, "pod/"+name+" evicted") {
			t.Errorf("the drains did not evict pod/%s:\n%s", name, drained)
		}
	}
	if !strings.Contains(out, "node/node-0 drained") {
		t.Errorf("drain output:\n%s", out)
	}
	if names := names(cl.kubectl(t, "", "get", "pods")); len(names) != 2 || names[0] != "elsewhere" || names[1] != "guarded-2" {
		t.Errorf("pods after the drain: %v", names)
	}
	if out := cl.kubectl(t, "", "get", "node", "node-0"); !strings.Contains(out, "SchedulingDisabled") {
		t.Errorf("node-0 not cordoned:\n%s", out)
	}
}
