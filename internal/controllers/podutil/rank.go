package podutil

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionCostAnnotation is the pod annotation whose integer value orders
// pods of equal readiness for deletion: lower cost goes first.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// phaseOrder ranks phases for deletion: lower goes first. Phases not listed
// (Succeeded, Failed) rank like Pending; controllers do not rank them.
var phaseOrder = map[corev1.PodPhase]int{
	corev1.PodPending: 0,
	corev1.PodUnknown: 1,
	corev1.PodRunning: 2,
}

// ActivePods sorts pods so that the ones to delete first come first. Use
// it with sort.Sort.
type ActivePods []*corev1.Pod

func (s ActivePods) Len() int           { return len(s) }
func (s ActivePods) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s ActivePods) Less(i, j int) bool { return deleteFirst(s[i], s[j], 0, 0, false) }

// RankedPods is ActivePods with two more keys: the pod-deletion-cost
// annotation, and Rank[i], the number of pods related to Pods[i] running
// on the same node (more goes first, so that doubled-up pods are removed
// before spread ones). Pods and Rank are swapped together.
type RankedPods struct {
	Pods []*corev1.Pod
	// Rank has one entry per pod; nil means all zero.
	Rank []int
}

func (s RankedPods) Len() int { return len(s.Pods) }

func (s RankedPods) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	if s.Rank != nil {
		s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
	}
}

func (s RankedPods) Less(i, j int) bool {
	ri, rj := 0, 0
	if s.Rank != nil {
		ri, rj = s.Rank[i], s.Rank[j]
	}
	return deleteFirst(s.Pods[i], s.Pods[j], ri, rj, true)
}

// deleteFirst reports whether a should be deleted before b.
func deleteFirst(a, b *corev1.Pod, rankA, rankB int, ranked bool) bool {
	// Unassigned before assigned.
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	// Pending < Unknown < Running.
	if pa, pb := phaseOrder[a.Status.Phase], phaseOrder[b.Status.Phase]; pa != pb {
		return pa < pb
	}
	// Not ready before ready.
	readyA, readyB := IsPodReady(a), IsPodReady(b)
	if readyA != readyB {
		return !readyA
	}
	if ranked {
		if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
			return ca < cb
		}
		if rankA != rankB {
			return rankA > rankB
		}
	}
	// Ready for a shorter time (or an unknown time) before longer.
	if readyA && readyB {
		ta, tb := readySince(a), readySince(b)
		if !ta.Equal(&tb) {
			return afterOrZero(ta, tb)
		}
	}
	// More restarts before fewer.
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	// Newer (or no creation time) before older.
	if ca, cb := a.CreationTimestamp, b.CreationTimestamp; !ca.Equal(&cb) {
		return afterOrZero(ca, cb)
	}
	return false
}

// afterOrZero orders a zero time first, then later before earlier.
func afterOrZero(a, b metav1.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b.Time)
}

func readySince(p *corev1.Pod) metav1.Time {
	if c := GetPodReadyCondition(&p.Status); c != nil {
		return c.LastTransitionTime
	}
	return metav1.Time{}
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

// deletionCost reads DeletionCostAnnotation; missing or malformed is 0.
func deletionCost(p *corev1.Pod) int64 {
	v, ok := p.Annotations[DeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}
