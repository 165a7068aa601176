package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// krField is the value of the first "Key:  value" line of describe output
// whose key (after indentation) is key; ok is false when there is none.
func krField(out, key string) (string, bool) {
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimLeft(l, " ")
		if v, found := strings.CutPrefix(t, key+":"); found {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// krSection is the lines of describe output after the line "name:" up to
// the next line at the same or a lower indentation.
func krSection(out, name string) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(t, name+":") {
			continue
		}
		indent := len(l) - len(t)
		var sec []string
		for _, m := range lines[i+1:] {
			mt := strings.TrimLeft(m, " ")
			if mt == "" {
				continue
			}
			if len(m)-len(mt) <= indent {
				break
			}
			sec = append(sec, m)
		}
		return sec
	}
	return nil
}

// krFieldsOf splits each line into whitespace-separated fields.
func krFieldsOf(lines []string) [][]string {
	var out [][]string
	for _, l := range lines {
		out = append(out, strings.Fields(l))
	}
	return out
}

// TestKubectlDescribe: kubectl describe of a Deployment, a Pod and a Node
// prints the expected sections and values, events included.
func TestKubectlDescribe(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()
	kubectl(t, env, krDeployment("web", 2, "nginx:1.25"), "apply", "-f", "-")
	kubectl(t, env, "", "rollout", "status", "deployment/web", "--timeout=60s")
	rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(rss.Items) != 1 {
		t.Fatalf("replicasets: %v %v", rss, err)
	}
	rs := rss.Items[0].Name

	want := func(t *testing.T, out, key, value string) {
		t.Helper()
		if got, ok := krField(out, key); !ok || got != value {
			t.Errorf("%s: %q (found %v), want %q", key, got, ok, value)
		}
	}

	t.Run("deployment", func(t *testing.T) {
		out := kubectl(t, env, "", "describe", "deployment", "web")
		want(t, out, "Name", "web")
		want(t, out, "Namespace", "default")
		want(t, out, "Selector", "app=web")
		want(t, out, "Replicas", "2 desired | 2 updated | 2 total | 2 available | 0 unavailable")
		want(t, out, "StrategyType", "RollingUpdate")
		want(t, out, "MinReadySeconds", "0")
		want(t, out, "RollingUpdateStrategy", "25% max unavailable, 25% max surge")
		want(t, out, "Annotations", "deployment.kubernetes.io/revision: 1")
		want(t, out, "Image", "nginx:1.25")
		want(t, out, "Port", "80/TCP")
		want(t, out, "NewReplicaSet", rs+" (2/2 replicas created)")
		want(t, out, "OldReplicaSets", "<none>")
		if got := krSection(out, "Labels"); len(got) != 1 || strings.TrimSpace(got[0]) != "tier=front" {
			t.Errorf("Labels continuation = %q (app=web on the first line)", got)
		}
		if got := krSection(out, "Containers"); len(got) == 0 || strings.TrimSpace(got[0]) != "main:" {
			t.Errorf("Containers section: %q", got)
		}
		conds := krFieldsOf(krSection(out, "Conditions"))
		if !slices.ContainsFunc(conds, func(f []string) bool {
			return slices.Equal(f, []string{"Available", "True", "MinimumReplicasAvailable"})
		}) ||
			!slices.ContainsFunc(conds, func(f []string) bool {
				return slices.Equal(f, []string{"Progressing", "True", "NewReplicaSetAvailable"})
			}) {
			t.Errorf("Conditions: %q", conds)
		}
		events := strings.Join(krSection(out, "Events"), "\n")
		if !strings.Contains(events, "Normal  ScalingReplicaSet") || !strings.Contains(events, "deployment-controller  Scaled up replica set "+rs+" from 0 to 2") {
			t.Errorf("Events:\n%s", events)
		}
	})

	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods: %v", err)
	}
	pod := pods.Items[0]
	node, err := cs.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nodeIP string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}

	t.Run("pod", func(t *testing.T) {
		out := kubectl(t, env, "", "describe", "pod", pod.Name)
		want(t, out, "Name", pod.Name)
		want(t, out, "Namespace", "default")
		want(t, out, "Node", pod.Spec.NodeName+"/"+nodeIP)
		want(t, out, "Status", "Running")
		want(t, out, "IP", pod.Status.PodIP)
		want(t, out, "Controlled By", "ReplicaSet/"+rs)
		want(t, out, "Image", "nginx:1.25")
		want(t, out, "State", "Running")
		want(t, out, "Ready", "True")
		want(t, out, "Restart Count", "0")
		want(t, out, "QoS Class", "BestEffort")
		if _, ok := krField(out, "Start Time"); !ok {
			t.Error("no Start Time")
		}
		if got := krSection(out, "Labels"); len(got) != 1 || !strings.HasPrefix(strings.TrimSpace(got[0]), "pod-template-hash=") {
			t.Errorf("Labels continuation: %q", got)
		}
		conds := krFieldsOf(krSection(out, "Conditions"))
		for _, c := range []string{"PodScheduled", "Initialized", "ContainersReady", "Ready"} {
			if !slices.ContainsFunc(conds, func(f []string) bool { return slices.Equal(f, []string{c, "True"}) }) {
				t.Errorf("condition %s True missing: %q", c, conds)
			}
		}
		events := strings.Join(krSection(out, "Events"), "\n")
		msg := fmt.Sprintf("default-scheduler  Successfully assigned default/%s to %s", pod.Name, pod.Spec.NodeName)
		if !strings.Contains(events, "Normal  Scheduled") || !strings.Contains(events, msg) {
			t.Errorf("Events (want Scheduled %q):\n%s", msg, events)
		}
	})

	t.Run("node", func(t *testing.T) {
		out := kubectl(t, env, "", "describe", "node", node.Name)
		want(t, out, "Name", node.Name)
		want(t, out, "Roles", "<none>")
		want(t, out, "Taints", "<none>")
		want(t, out, "Unschedulable", "false")
		want(t, out, "InternalIP", nodeIP)
		// a simulated node reports no Hostname address (its name resolves
		// to nothing)
		if strings.Contains(out, "Hostname:") {
			t.Errorf("describe node shows a Hostname address:\n%s", out)
		}
		want(t, out, "HolderIdentity", node.Name)
		want(t, out, "Operating System", "linux")
		want(t, out, "Architecture", "amd64")
		want(t, out, "PodCIDR", node.Spec.PodCIDR)
		if got := krFieldsOf(krSection(out, "Capacity")); !slices.ContainsFunc(got, func(f []string) bool { return slices.Equal(f, []string{"pods:", "110"}) }) {
			t.Errorf("Capacity: %q", got)
		}
		conds := krFieldsOf(krSection(out, "Conditions"))
		if !slices.ContainsFunc(conds, func(f []string) bool {
			return len(f) > 2 && f[0] == "Ready" && f[1] == "True" && slices.Contains(f, "KubeletReady")
		}) {
			t.Errorf("Conditions: %q", conds)
		}
		// The pods bound to this node, as the node's field selector finds
		// them.
		onNode, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name})
		if err != nil {
			t.Fatal(err)
		}
		want(t, out, "Non-terminated Pods", fmt.Sprintf("(%d in total)", len(onNode.Items)))
		pods := strings.Join(krSection(out, "Non-terminated Pods"), "\n")
		if !strings.Contains(pods, pod.Name) {
			t.Errorf("Non-terminated Pods lacks %s:\n%s", pod.Name, pods)
		}
		if len(krSection(out, "Allocated resources")) == 0 {
			t.Error("no Allocated resources section")
		}
	})
}
