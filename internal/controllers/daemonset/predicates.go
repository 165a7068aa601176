package daemonset

import (
	"github.com/setpoint-dev/setpoint/internal/nodematch"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Taint keys the controller tolerates on every daemon pod (Kubernetes'
// well-known node taints).
const (
	taintNotReady           = "node.kubernetes.io/not-ready"
	taintUnreachable        = "node.kubernetes.io/unreachable"
	taintDiskPressure       = "node.kubernetes.io/disk-pressure"
	taintMemoryPressure     = "node.kubernetes.io/memory-pressure"
	taintPIDPressure        = "node.kubernetes.io/pid-pressure"
	taintUnschedulable      = "node.kubernetes.io/unschedulable"
	taintNetworkUnavailable = "node.kubernetes.io/network-unavailable"
)

// addDaemonTolerations adds (or replaces the equal ones of) the tolerations
// every daemon pod carries: not-ready and unreachable NoExecute without
// tolerationSeconds, so the pod is never evicted from a failing node; the
// disk, memory and PID pressure and unschedulable NoSchedule, so it is
// placed on such nodes; and network-unavailable NoSchedule for host-network
// pods, which do not need the pod network.
func addDaemonTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		addOrUpdateToleration(spec, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(taintNotReady, corev1.TaintEffectNoExecute)
	add(taintUnreachable, corev1.TaintEffectNoExecute)
	add(taintDiskPressure, corev1.TaintEffectNoSchedule)
	add(taintMemoryPressure, corev1.TaintEffectNoSchedule)
	add(taintPIDPressure, corev1.TaintEffectNoSchedule)
	add(taintUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

// addOrUpdateToleration puts tol in spec: a toleration with the same key,
// operator, value and effect is replaced by it, otherwise it is appended.
func addOrUpdateToleration(spec *corev1.PodSpec, tol corev1.Toleration) {
	for i := range spec.Tolerations {
		if spec.Tolerations[i].MatchToleration(&tol) {
			spec.Tolerations[i] = tol
			return
		}
	}
	spec.Tolerations = append(spec.Tolerations, tol)
}

// nodeShouldRun tells whether ds wants a daemon pod on node (shouldRun)
// and whether a daemon pod already there may stay (shouldContinue): the
// template's nodeName, nodeSelector and required node affinity must match
// the node; every NoSchedule and NoExecute taint must be tolerated to run,
// only the NoExecute ones to stay. The daemon tolerations count.
func nodeShouldRun(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinue bool) {
	spec := &ds.Spec.Template.Spec
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	if !nodematch.MatchesNodeSelector(spec, node) {
		return false, false
	}
	tols := daemonTolerations(spec)
	if untolerated(node.Spec.Taints, tols, false) {
		return false, !untolerated(node.Spec.Taints, tols, true)
	}
	return true, true
}

// daemonTolerations returns spec's tolerations with the daemon ones added,
// without modifying spec.
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	cp := corev1.PodSpec{HostNetwork: spec.HostNetwork, Tolerations: append([]corev1.Toleration(nil), spec.Tolerations...)}
	addDaemonTolerations(&cp)
	return cp.Tolerations
}

// untolerated reports whether some taint of taints that tols do not
// tolerate has effect NoExecute, or, unless onlyNoExecute, NoSchedule.
func untolerated(taints []corev1.Taint, tols []corev1.Toleration, onlyNoExecute bool) bool {
	for i := range taints {
		t := &taints[i]
		switch t.Effect {
		case corev1.TaintEffectNoExecute:
		case corev1.TaintEffectNoSchedule:
			if onlyNoExecute {
				continue
			}
		default:
			continue
		}
		if !nodematch.Tolerates(tols, t) {
			return true
		}
	}
	return false
}

// nodeNameAffinity returns affinity with its required node affinity
// replaced by the single term "metadata.name In [node]", so that the
// scheduler binds the pod to node and nowhere else. Preferred terms and
// pod (anti-)affinity are kept. affinity is modified in place (it must be
// the pod's own copy).
func nodeNameAffinity(affinity *corev1.Affinity, node string) *corev1.Affinity {
	sel := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node},
		}},
	}}}
	if affinity == nil {
		affinity = &corev1.Affinity{}
	}
	if affinity.NodeAffinity == nil {
		affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return affinity
}

// targetNode returns the node a daemon pod is for: its spec.nodeName once
// bound, otherwise the single name of its "metadata.name In [node]"
// required node affinity term; "" when neither says.
func targetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		for _, r := range term.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0]
			}
		}
	}
	return ""
}
