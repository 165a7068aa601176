package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
)

// nodeInfo is the scheduler's view of one node: the Node object and the
// aggregates of the pods placed on it (confirmed and assumed).
type nodeInfo struct {
	// node is the latest Node from the informer; nil while pods are known
	// on a node the informer has not shown yet (or no longer shows).
	node *corev1.Node
	// allocatable and allocPods are parsed from node.status.allocatable
	// whenever node changes.
	allocatable resources
	allocPods   int64
	// readiness is readinessTaint(node), recomputed whenever node changes.
	readiness *corev1.Taint
	// requested and nonZero are the sums of podDemand.request and
	// podDemand.nonZero over the pods placed on the node; podCount is their number.
	requested, nonZero resources
	podCount           int64
	// byOwner counts the node's pods per controller owner UID; entries
	// reaching zero are deleted.
	byOwner map[types.UID]int
	// allocScalar is allocatable of every other resource (ephemeral-storage,
	// extended resources); requestedScalar sums the pods' scalar requests.
	allocScalar, requestedScalar map[corev1.ResourceName]int64
	// ports counts the host ports the node's pods claim.
	ports map[nodematch.HostPort]int
	// pods are the pods placed on the node.
	pods map[types.UID]*corev1.Pod
	// antiAffinityPods counts the node's pods with required pod
	// anti-affinity.
	antiAffinityPods int
	// affinityPods counts the node's pods with any pod (anti-)affinity.
	affinityPods int
}

func newNodeInfo() *nodeInfo {
	return &nodeInfo{byOwner: map[types.UID]int{}, pods: map[types.UID]*corev1.Pod{}}
}

func (n *nodeInfo) setNode(node *corev1.Node) {
	n.node = node
	a := node.Status.Allocatable
	n.allocatable = resources{milliCPU: a.Cpu().MilliValue(), memory: a.Memory().Value()}
	n.allocPods = a.Pods().Value()
	n.readiness = readinessTaint(node)
	n.allocScalar = nil
	for name, q := range a {
		if isScalar(name) {
			if n.allocScalar == nil {
				n.allocScalar = map[corev1.ResourceName]int64{}
			}
			n.allocScalar[name] = q.Value()
		}
	}
}

func (n *nodeInfo) addPod(pod *corev1.Pod, d *podDemand) {
	n.podCount++
	n.requested = n.requested.add(d.request)
	n.nonZero = n.nonZero.add(d.nonZero)
	if d.owner != "" {
		n.byOwner[d.owner]++
	}
	for name, v := range d.scalar {
		if n.requestedScalar == nil {
			n.requestedScalar = map[corev1.ResourceName]int64{}
		}
		n.requestedScalar[name] += v
	}
	for _, p := range d.ports {
		if n.ports == nil {
			n.ports = map[nodematch.HostPort]int{}
		}
		n.ports[p]++
	}
	n.pods[pod.UID] = pod
	if hasRequiredAntiAffinity(pod) {
		n.antiAffinityPods++
	}
	if hasPodAffinity(pod) {
		n.affinityPods++
	}
}

func (n *nodeInfo) removePod(pod *corev1.Pod, d *podDemand) {
	n.podCount--
	n.requested = n.requested.sub(d.request)
	n.nonZero = n.nonZero.sub(d.nonZero)
	if d.owner != "" {
		if n.byOwner[d.owner]--; n.byOwner[d.owner] <= 0 {
			delete(n.byOwner, d.owner)
		}
	}
	for name, v := range d.scalar {
		n.requestedScalar[name] -= v
	}
	for _, p := range d.ports {
		if n.ports[p]--; n.ports[p] <= 0 {
			delete(n.ports, p)
		}
	}
	delete(n.pods, pod.UID)
	if hasRequiredAntiAffinity(pod) {
		n.antiAffinityPods--
	}
	if hasPodAffinity(pod) {
		n.affinityPods--
	}
}

// clone copies the node's aggregates, for a preemption's what-if.
func (n *nodeInfo) clone() *nodeInfo {
	c := *n
	c.byOwner = maps.Clone(n.byOwner)
	c.requestedScalar = maps.Clone(n.requestedScalar)
	c.ports = maps.Clone(n.ports)
	c.pods = maps.Clone(n.pods)
	return &c
}

// placedPod is one pod counted on a node.
type placedPod struct {
	node   string
	pod    *corev1.Pod
	demand podDemand
	// assumed is true from assume until the informer shows the pod bound
	// (confirm) or the binding fails (forget).
	assumed bool
}

// schedCache holds the nodes and the placement of every pod that takes
// node resources: pods the informer shows bound, and assumed pods that this
// scheduler is binding. Not safe for concurrent use: the Scheduler guards
// it with its mutex.
//
// Invariant: for every node, the aggregates equal the sums over the pods of
// pods placed on it; a pod is placed on at most one node.
type schedCache struct {
	nodes map[string]*nodeInfo
	pods  map[types.UID]*placedPod
	// knownNodes counts the nodeInfos whose node is set.
	knownNodes int
	// antiAffinityPods counts the placed pods with required pod
	// anti-affinity, affinityPods those with any pod (anti-)affinity: when
	// zero, plain pods skip the scans that look for them.
	antiAffinityPods, affinityPods int
}

func newSchedCache() *schedCache {
	return &schedCache{nodes: map[string]*nodeInfo{}, pods: map[types.UID]*placedPod{}}
}

func (c *schedCache) nodeFor(name string) *nodeInfo {
	n := c.nodes[name]
	if n == nil {
		n = newNodeInfo()
		c.nodes[name] = n
	}
	return n
}

// setNode records the latest state of a node.
func (c *schedCache) setNode(node *corev1.Node) {
	n := c.nodeFor(node.Name)
	if n.node == nil {
		c.knownNodes++
	}
	n.setNode(node)
}

// removeNode forgets a deleted node; its pods stay counted on a node
// without object until they go.
func (c *schedCache) removeNode(name string) {
	n := c.nodes[name]
	if n == nil || n.node == nil {
		return
	}
	n.node = nil
	c.knownNodes--
	if n.podCount == 0 {
		delete(c.nodes, name)
	}
}

// isAssumed reports whether uid is assumed and not yet confirmed.
func (c *schedCache) isAssumed(uid types.UID) bool {
	p := c.pods[uid]
	return p != nil && p.assumed
}

// place counts pod with demand d on node, moving it there if it was
// counted elsewhere.
func (c *schedCache) place(pod *corev1.Pod, node string, d podDemand, assumed bool) {
	if p := c.pods[pod.UID]; p != nil {
		if p.node == node && sameDemand(&p.demand, &d) && maps.Equal(p.pod.Labels, pod.Labels) &&
			hasRequiredAntiAffinity(p.pod) == hasRequiredAntiAffinity(pod) && hasPodAffinity(p.pod) == hasPodAffinity(pod) {
			p.assumed = assumed
			p.pod = pod
			c.nodes[node].pods[pod.UID] = pod
			return
		}
		c.remove(pod.UID)
	}
	c.nodeFor(node).addPod(pod, &d)
	c.pods[pod.UID] = &placedPod{node: node, pod: pod, demand: d, assumed: assumed}
	if hasRequiredAntiAffinity(pod) {
		c.antiAffinityPods++
	}
	if hasPodAffinity(pod) {
		c.affinityPods++
	}
}

// assume counts a pod on the node it is being bound to, before the binding
// is written, so that the next decisions see its resources taken. It
// refuses (false) a pod already placed: the informer has shown it bound.
func (c *schedCache) assume(pod *corev1.Pod, node string, d podDemand) bool {
	if _, ok := c.pods[pod.UID]; ok {
		return false
	}
	c.place(pod, node, d, true)
	return true
}

// confirm records a pod the informer shows bound to node (the end of an
// assumption, or a pod bound by anyone).
func (c *schedCache) confirm(pod *corev1.Pod, node string, d podDemand) { c.place(pod, node, d, false) }

// forget undoes assume after a failed binding. A pod confirmed meanwhile
// stays.
func (c *schedCache) forget(uid types.UID) {
	if c.isAssumed(uid) {
		c.remove(uid)
	}
}

// remove releases a pod's resources (deleted, terminated or forgotten).
func (c *schedCache) remove(uid types.UID) {
	p := c.pods[uid]
	if p == nil {
		return
	}
	delete(c.pods, uid)
	n := c.nodes[p.node]
	n.removePod(p.pod, &p.demand)
	if hasRequiredAntiAffinity(p.pod) {
		c.antiAffinityPods--
	}
	if hasPodAffinity(p.pod) {
		c.affinityPods--
	}
	if n.node == nil && n.podCount == 0 {
		delete(c.nodes, p.node)
	}
}
