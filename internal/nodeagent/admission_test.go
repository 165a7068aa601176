package nodeagent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// withHostPort gives the pod's first container host port port.
func withHostPort(p *corev1.Pod, port int32) *corev1.Pod {
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	return p
}

// withRequests gives the pod's first container these requests.
func withRequests(p *corev1.Pod, rl corev1.ResourceList) *corev1.Pod {
	p.Spec.Containers[0].Resources.Requests = rl
	return p
}

func failed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

// checkRejected asserts the status the kubelet writes for a pod it
// rejected, and its Warning event (the message without the status'
// prefix).
func (e *env) checkRejected(name, reason, message string) {
	e.t.Helper()
	p := e.waitPod(name, "rejected", failed)
	if p.Status.Reason != reason || p.Status.Message != "Pod was rejected: "+message {
		e.t.Errorf("%s: reason %q message %q, want %q %q", name, p.Status.Reason, p.Status.Message, reason, "Pod was rejected: "+message)
	}
	if p.Status.StartTime == nil || p.Status.PodIP != "" || p.Status.HostIP != "" ||
		len(p.Status.ContainerStatuses) != 0 || podCondition(p, corev1.PodReady) != nil {
		e.t.Errorf("%s: rejected status = %+v", name, p.Status)
	}
	if c := podCondition(p, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue {
		e.t.Errorf("%s: PodScheduled = %+v, want it kept", name, c)
	}
	ev := e.waitEvent(name, reason, message)
	if ev.Type != corev1.EventTypeWarning || ev.Source.Component != "kubelet" || ev.InvolvedObject.FieldPath != "" {
		e.t.Errorf("%s: event = %+v", name, ev)
	}
}

// A pod whose host port another running pod of the node holds is rejected
// (NodePorts), the holder untouched; once the holder is gone, a new pod
// with that port (as a StatefulSet recreates its rejected pod) runs.
func TestAdmissionHostPortConflict(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 1})
	e.createBound(withHostPort(newPod("holder", corev1.RestartPolicyAlways, "app=nginx"), 21017), "node-0")
	holder := e.waitPod("holder", "running", running)
	e.createBound(withHostPort(newPod("ss-0", corev1.RestartPolicyAlways, "app=nginx"), 21017), "node-0")
	e.checkRejected("ss-0", "NodePorts",
		"Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")
	if p := e.getPod("holder"); p.ResourceVersion != holder.ResourceVersion {
		t.Errorf("holder changed: %+v", p.Status)
	}
	// Another port on the same node is free.
	e.createBound(withHostPort(newPod("other", corev1.RestartPolicyAlways, "app=nginx"), 21018), "node-0")
	e.waitPod("other", "running", running)

	// Graceful deletions: the agent stops the pods' containers, then
	// deletes them, so a pod gone from the API no longer counts.
	for _, name := range []string{"ss-0", "holder"} {
		if err := e.pods.Namespace("default").Delete(ctx(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "holder gone", func() bool {
		_, err := e.pods.Namespace("default").Get(ctx(), "holder", metav1.GetOptions{})
		return err != nil
	})
	eventually(t, "ss-0 gone", func() bool {
		_, err := e.pods.Namespace("default").Get(ctx(), "ss-0", metav1.GetOptions{})
		return err != nil
	})
	e.createBound(withHostPort(newPod("ss-0", corev1.RestartPolicyAlways, "app=nginx"), 21017), "node-0")
	if p := e.waitPod("ss-0", "running", running); p.Status.Reason != "" || p.Status.PodIP == "" {
		t.Errorf("recreated ss-0: %+v", p.Status)
	}
}

// A pod requesting more cpu than the node has left is rejected OutOfcpu,
// and one past the node's pod count OutOfpods; rejected pods take nothing
// (the next pod that fits runs).
func TestAdmissionOutOfResources(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 1, Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods: resource.MustParse("2")}})
	e.createBound(withRequests(newPod("big", corev1.RestartPolicyAlways, "app=nginx"),
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}), "node-0")
	e.waitPod("big", "running", running)
	e.createBound(withRequests(newPod("more", corev1.RestartPolicyAlways, "app=nginx"),
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}), "node-0")
	e.checkRejected("more", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000")

	e.createBound(withRequests(newPod("fits", corev1.RestartPolicyAlways, "app=nginx"),
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}), "node-0")
	e.waitPod("fits", "running", running)
	e.createBound(newPod("extra", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.checkRejected("extra", "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2")

	// A deleted pod, once stopped, and a finished pod no longer count.
	if err := e.pods.Namespace("default").Delete(ctx(), "fits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "fits gone", func() bool {
		_, err := e.pods.Namespace("default").Get(ctx(), "fits", metav1.GetOptions{})
		return err != nil
	})
	e.createBound(withCommand(newPod("job", corev1.RestartPolicyNever, "app=busybox")), "node-0")
	e.waitPod("job", "succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	e.createBound(newPod("last", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.waitPod("last", "running", running)
}

// A pod whose nodeSelector the node does not match is rejected
// (NodeAffinity), as is one that does not tolerate a NoExecute taint of
// its node (TaintToleration); a tolerating pod runs there.
func TestAdmissionNodeSelectorAndTaints(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	tainted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{
		Taints: []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoExecute}}}}
	if _, err := e.nodes.Create(ctx(), tainted, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.startAgent(nodeagent.Options{Count: 2})
	sel := newPod("picky", corev1.RestartPolicyAlways, "app=nginx")
	sel.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	e.createBound(sel, "node-0")
	e.checkRejected("picky", "NodeAffinity",
		"Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")

	tol := newPod("tolerant", corev1.RestartPolicyAlways, "app=nginx")
	tol.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	e.createBound(tol, "node-1")
	e.waitPod("tolerant", "running", running)
	e.createBound(newPod("intolerant", corev1.RestartPolicyAlways, "app=nginx"), "node-1")
	e.checkRejected("intolerant", "TaintToleration",
		"Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate")
}
