package nodeagent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Kubelet admission. Before a pod starts, the kubelet's admit handlers
// judge it against its node and the pods already admitted there that are
// still active (not terminal, not terminated after their deletion); a pod
// that does not fit is rejected: Failed at once, reason and message as
// the handler words them, a Warning event of that reason, and it never
// runs. The kubelet admits the pods it receives one at a time in creation
// order; here the decisions of a node are made under the agent's mutex,
// and the node's pods that are due at the same time are decided together
// in creation order, so two pods arriving at once never both take the
// last of something.

// track files ps under its node (guarded by Agent.mu).
func (n *node) track(key types.NamespacedName, ps *podState) {
	if n.sims == nil {
		n.sims = map[types.NamespacedName]*podState{}
	}
	n.sims[key] = ps
}

// holds reports whether the pod counts against its node at admission: it
// was admitted and is neither terminal nor stopped after its deletion.
func (ps *podState) holds() bool {
	return ps.admitted() && !ps.released && !ps.stopped && !isTerminal(ps.phase())
}

// rejected reports a pod the kubelet refused.
func (ps *podState) rejected() bool { return ps.rejectReason != "" }

// undecided reports a pod not yet admitted nor rejected that is due for
// admission at now (it may start after startDelay, is not being deleted,
// and no earlier kubelet admitted it).
func (ps *podState) undecided(now time.Time, startDelay time.Duration) bool {
	p := ps.pod
	return !ps.admitted() && !ps.rejected() && p != nil && p.DeletionTimestamp == nil &&
		p.Status.StartTime == nil && !isTerminal(p.Status.Phase) && !now.Before(ps.seenAt.Add(startDelay))
}

// admitLocked decides ps's pod and every other pod of its node due at now
// in creation order: each is admitted (ps.admit) or rejected. Pods other
// than ps that were decided are returned, to be looked at again.
func (a *Agent) admitLocked(ps *podState, now time.Time) ([]types.NamespacedName, error) {
	n := ps.node
	node, err := a.nodeObject(n)
	if err != nil {
		return nil, fmt.Errorf("admit pod %s/%s: read node %s: %w", ps.ns, ps.name, n.name, err)
	}
	return decideBatch(ps, node, now, a.opts.StartDelay), nil
}

// decideBatch is admitLocked's decision over ps's node's simulation
// states, node being its Node.
func decideBatch(ps *podState, node *corev1.Node, now time.Time, startDelay time.Duration) []types.NamespacedName {
	var active []*corev1.Pod
	batch := []*podState{ps}
	for _, q := range ps.node.sims {
		switch {
		case q.holds():
			active = append(active, q.pod)
		case q != ps && q.undecided(now, startDelay):
			batch = append(batch, q)
		}
	}
	slices.SortFunc(batch, byCreation)
	var others []types.NamespacedName
	for _, q := range batch {
		if reason, msg := admissionCheck(q.pod, node, active); reason != "" {
			q.reject(reason, msg, now)
		} else {
			q.admit(q.pod, now)
			active = append(active, q.pod)
		}
		if q != ps {
			others = append(others, types.NamespacedName{Namespace: q.ns, Name: q.name})
		}
	}
	return others
}

// byCreation orders pods by creation time, then namespace and name.
func byCreation(a, b *podState) int {
	if c := a.pod.CreationTimestamp.Compare(b.pod.CreationTimestamp.Time); c != 0 {
		return c
	}
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// reject records the kubelet's refusal of the pod at now and its event
// (the handler's message, without the status' prefix).
func (ps *podState) reject(reason, message string, now time.Time) {
	ps.rejectReason, ps.rejectMsg = reason, rejectedPrefix+message
	ps.rejectedAt = now.Truncate(timeGranularity)
	ps.podEvent(corev1.EventTypeWarning, reason, message)
}

// rejectedStatus is the status the kubelet writes for a pod it rejected:
// phase Failed with its reason and message, startTime the rejection,
// observedGeneration the pod's generation, qosClass and the conditions
// the kubelet does not own kept; no container statuses, no addresses.
func (ps *podState) rejectedStatus(pod *corev1.Pod) corev1.PodStatus {
	start := mt(ps.rejectedAt)
	st := corev1.PodStatus{Phase: corev1.PodFailed, Reason: ps.rejectReason, Message: ps.rejectMsg,
		QOSClass: pod.Status.QOSClass, StartTime: &start, ObservedGeneration: pod.Generation,
		ResourceClaimStatuses: pod.Status.ResourceClaimStatuses}
	for _, c := range pod.Status.Conditions {
		if !kubeletCondition(c.Type) {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// kubeletCondition reports the pod conditions the kubelet owns.
func kubeletCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
		corev1.PodResizePending, corev1.PodResizeInProgress:
		return true
	}
	return false
}
