package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const schedulerManifest = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: anti}
spec:
  replicas: 4
  selector: {matchLabels: {app: anti}}
  template:
    metadata: {labels: {app: anti}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: anti}}
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: needs-db}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: db}}
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/approval}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`

// The cases through real kubectl against `setpoint up --nodes 3`:
// 4 replicas with required anti-affinity per host leave one Pending; a
// pod asking for a GPU on nodes without one, and one with required
// affinity to no pod, stay Pending with kube-scheduler's messages; a gated
// pod waits until its gate is removed.
func TestSchedulerRefusesWhatKubeRefuses(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 3)
	cl.kubectl(t, schedulerManifest, "apply", "-f", "-")
	pods := func() map[string]corev1.Pod {
		var l corev1.PodList
		if err := json.Unmarshal([]byte(cl.kubectl(t, "", "get", "pods", "-o", "json")), &l); err != nil {
			t.Fatal(err)
		}
		out := map[string]corev1.Pod{}
		for _, p := range l.Items {
			out[p.Name] = p
		}
		return out
	}
	msg := func(p corev1.Pod) string {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return c.Reason + ": " + c.Message
			}
		}
		return ""
	}
	notHelpful := " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	eventually(t, 45*time.Second, "pods placed as kube-scheduler places them", func() string {
		ps := pods()
		nodes, pending := map[string]bool{}, 0
		for name, p := range ps {
			if !strings.HasPrefix(name, "anti-") {
				continue
			}
			if p.Spec.NodeName == "" {
				pending++
				if want := "Unschedulable: 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules." +
					" preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."; msg(p) != want {
					return fmt.Sprintf("pending anti pod says %q", msg(p))
				}
				continue
			}
			if nodes[p.Spec.NodeName] {
				t.Fatalf("two anti pods on %s", p.Spec.NodeName)
			}
			nodes[p.Spec.NodeName] = true
		}
		if len(nodes) != 3 || pending != 1 {
			return fmt.Sprintf("anti pods on %d nodes, %d pending", len(nodes), pending)
		}
		want := map[string]string{
			"gpu":      "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu." + notHelpful,
			"needs-db": "Unschedulable: 0/3 nodes are available: 3 node(s) didn't match pod affinity rules." + notHelpful,
			"gated":    "SchedulingGated: Scheduling is blocked due to non-empty scheduling gates",
		}
		for name, m := range want {
			if p := ps[name]; p.Spec.NodeName != "" || msg(p) != m {
				return fmt.Sprintf("%s on %q says %q, want %q", name, p.Spec.NodeName, msg(p), m)
			}
		}
		return ""
	})
	cl.kubectl(t, "", "patch", "pod", "gated", "--type=json", "-p", `[{"op":"remove","path":"/spec/schedulingGates"}]`)
	cl.kubectl(t, "", "run", "db", "--image=registry.k8s.io/pause:3.10", "--labels=app=db")
	eventually(t, 30*time.Second, "gated and needs-db running, with db", func() string {
		ps := pods()
		for _, name := range []string{"gated", "needs-db", "db"} {
			if ps[name].Status.Phase != corev1.PodRunning {
				return fmt.Sprintf("%s is %s (%s)", name, ps[name].Status.Phase, msg(ps[name]))
			}
		}
		if ps["needs-db"].Spec.NodeName != ps["db"].Spec.NodeName {
			return "needs-db not with db"
		}
		return ""
	})
	out := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.name=gpu,reason=FailedScheduling", "-o", "name")
	if strings.TrimSpace(out) == "" {
		t.Fatal("no FailedScheduling event for gpu")
	}
}
