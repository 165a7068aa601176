package nodeagent_test

import (
	"net/netip"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Nodes are registered with labels, pod CIDR, capacity, addresses and the
// kubelet's four conditions, each with a Lease owned by it that is renewed
// every 10 s.
func TestRegistrationAndLeases(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 3, Labels: map[string]string{"zone": "a"}})
	cidrs := map[string]bool{}
	for i, name := range []string{"node-0", "node-1", "node-2"} {
		n, err := e.nodes.Get(ctx(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Labels[corev1.LabelHostname] != name || n.Labels[corev1.LabelOSStable] != "linux" ||
			n.Labels[corev1.LabelArchStable] != "amd64" || n.Labels["zone"] != "a" {
			t.Errorf("%s labels = %v", name, n.Labels)
		}
		if cidrs[n.Spec.PodCIDR] || n.Spec.PodCIDR == "" {
			t.Errorf("%s pod CIDR %q empty or repeated", name, n.Spec.PodCIDR)
		}
		cidrs[n.Spec.PodCIDR] = true
		if q := n.Status.Capacity[corev1.ResourcePods]; q.Cmp(resource.MustParse("110")) != 0 {
			t.Errorf("%s pods capacity = %s", name, q.String())
		}
		if q := n.Status.Allocatable[corev1.ResourceMemory]; q.Cmp(resource.MustParse("256Gi")) != 0 {
			t.Errorf("%s allocatable memory = %s", name, q.String())
		}
		if len(n.Status.Addresses) == 0 || n.Status.Addresses[0].Type != corev1.NodeInternalIP {
			t.Errorf("%s addresses = %v", name, n.Status.Addresses)
		}
		ready := nodeCondition(n, corev1.NodeReady)
		if ready == nil || ready.Status != corev1.ConditionTrue || ready.Reason != "KubeletReady" ||
			ready.Message != "kubelet is posting ready status" || !ready.LastHeartbeatTime.Time.Equal(epoch) {
			t.Errorf("%s Ready = %+v", name, ready)
		}
		for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
			if c := nodeCondition(n, typ); c == nil || c.Status != corev1.ConditionFalse {
				t.Errorf("%s %s = %+v", name, typ, c)
			}
		}
		l, err := e.lease.Get(ctx(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *l.Spec.HolderIdentity != name || *l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(epoch) {
			t.Errorf("lease %d = %+v", i, l.Spec)
		}
		if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != n.UID || l.OwnerReferences[0].Kind != "Node" {
			t.Errorf("lease owner = %+v", l.OwnerReferences)
		}
	}
	e.clk.Step(10 * time.Second)
	eventually(t, "leases renewed", func() bool {
		for _, name := range []string{"node-0", "node-1", "node-2"} {
			l, err := e.lease.Get(ctx(), name, metav1.GetOptions{})
			if err != nil || !l.Spec.RenewTime.Time.Equal(epoch.Add(10*time.Second)) {
				return false
			}
		}
		return true
	})
}

// A bound pod goes Running with every status field a kubelet sets; pod IPs
// are distinct and inside the node's pod CIDR.
func TestBoundPodsRun(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 2})
	ips := map[string]string{}
	for i, name := range []string{"a", "b", "c", "d"} {
		node := []string{"node-0", "node-1"}[i%2]
		p := newPod(name, corev1.RestartPolicyAlways, "app=nginx:1.27", "side=busybox")
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		e.createBound(p, node)
	}
	for i, name := range []string{"a", "b", "c", "d"} {
		node := []string{"node-0", "node-1"}[i%2]
		p := e.waitPod(name, "running", running)
		n, err := e.nodes.Get(ctx(), node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkRunning(t, p, n)
		if other, dup := ips[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", name, other, p.Status.PodIP)
		}
		ips[p.Status.PodIP] = name
	}
}

func checkRunning(t *testing.T, p *corev1.Pod, n *corev1.Node) {
	t.Helper()
	st := p.Status
	if st.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("%s qosClass = %q", p.Name, st.QOSClass)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers,
		corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if c := podCondition(p, typ); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("%s condition %s = %+v", p.Name, typ, c)
		}
	}
	cidr := netip.MustParsePrefix(n.Spec.PodCIDR)
	ip, err := netip.ParseAddr(st.PodIP)
	if err != nil || !cidr.Contains(ip) || len(st.PodIPs) != 1 || st.PodIPs[0].IP != st.PodIP {
		t.Errorf("%s podIP %q podIPs %v not in %s", p.Name, st.PodIP, st.PodIPs, cidr)
	}
	if st.HostIP != n.Status.Addresses[0].Address || len(st.HostIPs) != 1 || st.HostIPs[0].IP != st.HostIP {
		t.Errorf("%s hostIP %q hostIPs %v", p.Name, st.HostIP, st.HostIPs)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(epoch) {
		t.Errorf("%s startTime = %v", p.Name, st.StartTime)
	}
	if len(st.ContainerStatuses) != len(p.Spec.Containers) {
		t.Fatalf("%s container statuses = %+v", p.Name, st.ContainerStatuses)
	}
	for i, cs := range st.ContainerStatuses {
		c := p.Spec.Containers[i]
		if cs.Name != c.Name || cs.Image != c.Image || cs.ImageID == "" || cs.ContainerID == "" || !cs.Ready ||
			cs.Started == nil || !*cs.Started || cs.State.Running == nil || !cs.State.Running.StartedAt.Time.Equal(epoch) ||
			cs.RestartCount != 0 {
			t.Errorf("%s container status %d = %+v", p.Name, i, cs)
		}
	}
	if len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Terminated == nil ||
		st.InitContainerStatuses[0].State.Terminated.Reason != "Completed" {
		t.Errorf("%s init statuses = %+v", p.Name, st.InitContainerStatuses)
	}
}

// A pod stays Pending for StartDelay after it is bound.
func TestStartDelay(t *testing.T) {
	e := startEnv(t, nodeagent.Options{StartDelay: 30 * time.Second})
	e.createBound(newPod("slow", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.stepUntil("slow pod running", 10*time.Second, func() bool { return running(e.getPod("slow")) })
	p := e.getPod("slow")
	if got := p.Status.StartTime.Time.Sub(epoch); got < 30*time.Second {
		t.Errorf("pod started %s after binding, want >= 30s", got)
	}
}

// A graceful deletion ends with the pod gone once the stop delay passed.
func TestGracefulDeletion(t *testing.T) {
	e := startEnv(t, nodeagent.Options{StopDelay: 5 * time.Second})
	e.createBound(newPod("victim", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.waitPod("victim", "running", running)
	if err := e.pods.Namespace("default").Delete(ctx(), "victim", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p := e.getPod("victim")
	if p.DeletionTimestamp == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("pod not terminating with the default grace period: %+v", p.ObjectMeta)
	}
	e.stepUntil("pod deleted", time.Second, func() bool {
		_, err := e.pods.Namespace("default").Get(ctx(), "victim", metav1.GetOptions{})
		return err != nil
	})
	if got := e.clk.Since(epoch); got < 5*time.Second {
		t.Errorf("pod gone after %s of fake time, want >= 5s", got)
	}
}

// Extended resources another party advertises in a node's capacity (the
// e2e framework's AddExtendedResource, a device plugin's operator) survive
// the kubelet's status posts, with allocatable equal to capacity; an
// extended resource left only in allocatable is dropped, as the kubelet
// drops it.
func TestStatusKeepsExtendedResources(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 1})
	n, err := e.nodes.Get(ctx(), "node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Capacity["example.com/fakecpu"] = resource.MustParse("1000")
	n.Status.Allocatable["example.com/fakecpu"] = resource.MustParse("900")
	n.Status.Allocatable["example.com/gone"] = resource.MustParse("1")
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionUnknown // makes the kubelet post
		}
	}
	if _, err := e.nodes.UpdateStatus(ctx(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The agent compares with the node it watches: a status round that runs
	// before its watch delivered the update above sees nothing to post, so
	// step until a round does.
	e.stepUntil("status posted", 10*time.Second, func() bool {
		n, err := e.nodes.Get(ctx(), "node-0", metav1.GetOptions{})
		return err == nil && nodeCondition(n, corev1.NodeReady).Status == corev1.ConditionTrue
	})
	n, err = e.nodes.Get(ctx(), "node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, list := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
		if q := list["example.com/fakecpu"]; q.Cmp(resource.MustParse("1000")) != 0 {
			t.Errorf("%s example.com/fakecpu = %s, want 1000", what, q.String())
		}
		if q := list[corev1.ResourceCPU]; q.IsZero() {
			t.Errorf("%s lost cpu: %v", what, list)
		}
	}
	if _, ok := n.Status.Allocatable["example.com/gone"]; ok {
		t.Errorf("allocatable keeps example.com/gone, which capacity lacks: %v", n.Status.Allocatable)
	}
}
