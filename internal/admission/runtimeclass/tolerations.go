package runtimeclass

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// MergeTolerations merges two lists of tolerations, first's before
// second's, dropping a toleration another one of the lists tolerates a
// superset of (of two equal ones the first is kept), as Kubernetes'
// pkg/util/tolerations.MergeTolerations.
func MergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, kept := range merged {
			if isSuperset(kept, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(t, later) && isSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// isSuperset reports whether ss tolerates every taint t tolerates.
func isSuperset(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(t, ss) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
