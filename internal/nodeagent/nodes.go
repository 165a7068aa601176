package nodeagent

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Node condition reasons and messages, the kubelet's.
const (
	kubeletVersion = "v1.37.2"
)

// registerParallelism bounds concurrent registrations and heartbeats.
const registerParallelism = 16

// registration retry back-off, on the agent's clock.
const (
	registerRetryBase = 500 * time.Millisecond
	registerRetryMax  = 30 * time.Second
)

// registerAll registers every node and creates its Lease, retrying each
// until it succeeds or ctx ends.
func (a *Agent) registerAll(ctx context.Context) error {
	errs := make(chan error, len(a.ordered))
	sem := make(chan struct{}, registerParallelism)
	var wg sync.WaitGroup
	for _, n := range a.ordered {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs <- a.registerWithRetry(ctx, n)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *Agent) registerWithRetry(ctx context.Context, n *node) error {
	delay := registerRetryBase
	for {
		err := a.register(ctx, n)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return nil // stopping; not a failure of the agent
		}
		a.log.Warn("node registration failed; retrying", "node", n.name, "err", err, "after", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-a.clock.After(delay):
		}
		delay = min(2*delay, registerRetryMax)
	}
}

// register creates the node (or takes over an existing one of that name:
// labels merged, pod CIDR set if empty, taints kept), posts its status
// through the status subresource, and makes sure its Lease exists.
func (a *Agent) register(ctx context.Context, n *node) error {
	cur, err := n.api.nodes.Create(ctx, a.newNode(n), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, err = a.takeOver(ctx, n)
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	ip, err := newIPAM(cur.Spec.PodCIDR)
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	a.mu.Lock()
	if n.ipam == nil {
		n.ipam = ip
	}
	n.uid = cur.UID
	a.mu.Unlock()
	if err := a.postStatus(ctx, n, cur); err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	if err := a.renewLease(ctx, n); err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	return nil
}

// newNode is the node as first created: labels, pod CIDR, capacity; the
// conditions come with the first status post.
func (a *Agent) newNode(n *node) *corev1.Node {
	cidr := podCIDR(n.index)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: a.labels(n)},
		Spec:       corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{Capacity: a.opts.Capacity.DeepCopy(), Allocatable: a.opts.Capacity.DeepCopy(),
			Addresses: addresses(n), NodeInfo: nodeInfo(n), DaemonEndpoints: a.daemonEndpoints()},
	}
}

func (a *Agent) takeOver(ctx context.Context, n *node) (*corev1.Node, error) {
	cur, err := n.api.nodes.Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	upd := cur.DeepCopy()
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	maps.Copy(upd.Labels, a.labels(n))
	if upd.Spec.PodCIDR == "" {
		upd.Spec.PodCIDR, upd.Spec.PodCIDRs = podCIDR(n.index), []string{podCIDR(n.index)}
	}
	if apiequality.Semantic.DeepEqual(upd.ObjectMeta, cur.ObjectMeta) && upd.Spec.PodCIDR == cur.Spec.PodCIDR {
		return cur, nil
	}
	return n.api.nodes.Update(ctx, upd, metav1.UpdateOptions{})
}

func (a *Agent) labels(n *node) map[string]string {
	l := map[string]string{
		corev1.LabelHostname:           n.name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         "amd64",
		corev1.LabelInstanceTypeStable: "setpoint-sim",
	}
	maps.Copy(l, a.opts.Labels)
	return l
}

// addresses are what the node reports: its InternalIP, the agent's kubelet
// endpoint address. No Hostname address: kube-apiserver prefers it, and a
// simulated node's name resolves to nothing.
func addresses(n *node) []corev1.NodeAddress {
	return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip}}
}

// daemonEndpoints reports the agent's kubelet endpoint port.
func (a *Agent) daemonEndpoints() corev1.NodeDaemonEndpoints {
	a.mu.Lock()
	defer a.mu.Unlock()
	var port int32
	if a.kubelet != nil {
		port = a.kubelet.port
	}
	return corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}}
}

func nodeInfo(n *node) corev1.NodeSystemInfo {
	id := fmt.Sprintf("%032x", n.index+1)
	return corev1.NodeSystemInfo{
		MachineID: id, SystemUUID: id, BootID: id,
		KernelVersion: "6.8.0-setpoint", OSImage: "setpoint simulated node",
		ContainerRuntimeVersion: "setpoint-sim://1.0", KubeletVersion: kubeletVersion,
		OperatingSystem: "linux", Architecture: "amd64",
	}
}

// desiredStatus is the status this kubelet posts now, over cur: capacity,
// addresses, node info and its four conditions (healthy, heartbeat now,
// transition time kept while the status is unchanged). Conditions of other
// types that cur carries are kept.
func (a *Agent) desiredStatus(n *node, cur corev1.NodeStatus, now metav1.Time) corev1.NodeStatus {
	st := *cur.DeepCopy()
	st.Capacity, st.Allocatable = resources(a.opts.Capacity, cur)
	st.Addresses, st.NodeInfo, st.DaemonEndpoints = addresses(n), nodeInfo(n), a.daemonEndpoints()
	for _, c := range []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
			Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure",
			Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID",
			Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status"},
	} {
		setNodeCondition(&st, c, now)
	}
	return st
}

// resources are the capacity and allocatable this kubelet posts over cur:
// its own capacity, plus the extended resources others advertised in
// cur's capacity (the kubelet merges its figures into the node it read,
// so an operator's or a test's example.com/foo stays); allocatable equals
// capacity (no reservations), and an extended resource no longer in
// capacity leaves allocatable.
func resources(own corev1.ResourceList, cur corev1.NodeStatus) (capacity, allocatable corev1.ResourceList) {
	capacity = own.DeepCopy()
	for name, q := range cur.Capacity {
		if _, mine := own[name]; !mine && isExtendedResource(name) {
			capacity[name] = q.DeepCopy()
		}
	}
	return capacity, capacity.DeepCopy()
}

// isExtendedResource: a resource name with a domain other than
// kubernetes.io (nor the requests. prefix of quotas), as the kubelet
// tells extended resources.
func isExtendedResource(name corev1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) &&
		!strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// setNodeCondition sets c on st with heartbeat now; the transition time is
// now unless the condition already had c's status.
func setNodeCondition(st *corev1.NodeStatus, c corev1.NodeCondition, now metav1.Time) {
	c.LastHeartbeatTime, c.LastTransitionTime = now, now
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// statusChanged reports whether posting want over cur changes anything
// but heartbeat times.
func statusChanged(cur, want corev1.NodeStatus) bool {
	c, w := cur.DeepCopy(), want.DeepCopy()
	for _, s := range []*corev1.NodeStatus{c, w} {
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
	}
	return !apiequality.Semantic.DeepEqual(c, w)
}

// postStatus writes the desired status over cur through the status
// subresource and records the report time.
func (a *Agent) postStatus(ctx context.Context, n *node, cur *corev1.Node) error {
	now := a.clock.Now()
	upd := cur.DeepCopy()
	upd.Status = a.desiredStatus(n, cur.Status, metav1.NewTime(now.Truncate(time.Second)))
	if _, err := n.api.nodes.UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of node %s: %w", n.name, err)
	}
	a.mu.Lock()
	n.lastReport = now
	a.mu.Unlock()
	return nil
}
