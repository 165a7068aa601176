package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestUpQuotaAndLimitRange: real kubectl against `setpoint up`: a quota
// made with `kubectl create quota` fills its status, refuses a pod over it
// with kube-apiserver's message and shows its usage in `kubectl describe`;
// a LimitRange defaults a pod's resources.
func TestUpQuotaAndLimitRange(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	c.kubectl(t, "", "create", "namespace", "q")
	c.kubectl(t, "", "create", "quota", "q", "-n", "q", "--hard=pods=2,count/configmaps=5")
	eventually(t, 30*time.Second, "quota status", func() string {
		out := c.kubectl(t, "", "get", "quota", "q", "-n", "q", "-o", "jsonpath={.status.used.pods}")
		if out != "0" {
			return "used pods " + out
		}
		return ""
	})
	c.kubectl(t, "", "run", "p1", "-n", "q", "--image=busybox")
	c.kubectl(t, "", "run", "p2", "-n", "q", "--image=busybox")
	_, errOut, err := c.kubectlErr(t, "", "run", "p3", "-n", "q", "--image=busybox")
	const want = `pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("third pod: err %v, stderr %q, want %q", err, errOut, want)
	}
	desc := c.kubectl(t, "", "describe", "quota", "q", "-n", "q")
	if !containsLine(desc, "pods", "2", "2") {
		t.Fatalf("describe quota:\n%s", desc)
	}

	c.kubectl(t, `apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: default}
spec:
  limits:
  - type: Container
    default: {cpu: 300m, memory: 128Mi}
    defaultRequest: {cpu: 100m}
`, "apply", "-f", "-")
	c.kubectl(t, "", "run", "lr", "--image=busybox")
	res := c.kubectl(t, "", "get", "pod", "lr", "-o", "jsonpath={.spec.containers[0].resources.limits.cpu} {.spec.containers[0].resources.requests.cpu} {.metadata.annotations.kubernetes\\.io/limit-ranger}")
	if res != "300m 100m LimitRanger plugin set: cpu, memory request for container lr; cpu, memory limit for container lr" {
		t.Fatalf("defaulted pod: %q", res)
	}
}

// containsLine: some line of out has exactly these fields.
func containsLine(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(l), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// TestUpDrainRespectsBudget: `kubectl drain` of the node running both
// replicas of a Deployment guarded by minAvailable 1 evicts one, waits
// (429) until its replacement is ready elsewhere, then the other; at no
// time are fewer than one replica ready.
func TestUpDrainRespectsBudget(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2)
	c.kubectl(t, "", "cordon", "node-1")
	c.kubectl(t, "", "create", "deployment", "web", "--image=busybox", "--replicas=2")
	c.kubectl(t, "", "create", "pdb", "web", "--selector=app=web", "--min-available=1")
	rc := restClient(t, c.kubeconfig)
	eventually(t, 60*time.Second, "2 ready pods on node-0", func() string {
		if n := len(runningPods(t, rc, "default", "app=web")); n != 2 {
			return fmt.Sprintf("ready pods: %d", n)
		}
		return ""
	})
	eventually(t, 30*time.Second, "budget allows 1", func() string {
		out := c.kubectl(t, "", "get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}")
		if out != "1" {
			return "disruptionsAllowed " + out
		}
		return ""
	})
	c.kubectl(t, "", "uncordon", "node-1")

	var minReady atomic.Int64
	minReady.Store(2)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if n := int64(len(runningPods(t, rc, "default", "app=web"))); n < minReady.Load() {
				minReady.Store(n)
			}
		}
	}()
	out, errOut, err := c.kubectlErr(t, "", "drain", "node-0", "--ignore-daemonsets", "--timeout=50s")
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("drain: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(errOut+out, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("drain never waited for the budget:\n%s\n%s", out, errOut)
	}
	if m := minReady.Load(); m < 1 {
		t.Fatalf("ready replicas fell to %d during the drain", m)
	}
	for _, p := range runningPods(t, rc, "default", "app=web") {
		if p.Spec.NodeName == "node-0" {
			t.Fatalf("pod %s still on the drained node", p.Name)
		}
	}
}
