package nodematch

import (
	"strconv"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tolerates reports whether any of tols tolerates t.
func Tolerates(tols []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tols {
		if TolerationMatches(&tols[i], t) {
			return true
		}
	}
	return false
}

// TolerationMatches reports whether tol tolerates t.
func TolerationMatches(tol *corev1.Toleration, t *corev1.Taint) bool {
	return tol.ToleratesTaint(logr.Discard(), t, false)
}

// MatchesNodeSelector applies spec.nodeSelector and the required node
// affinity of spec to node.
func MatchesNodeSelector(spec *corev1.PodSpec, node *corev1.Node) bool {
	for k, v := range spec.NodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		if MatchesTerm(&terms[i], node) {
			return true
		}
	}
	return false
}

// MatchesTerm ANDs a term's label and field requirements against node; an
// empty term matches nothing.
func MatchesTerm(term *corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for i := range term.MatchExpressions {
		r := &term.MatchExpressions[i]
		v, ok := node.Labels[r.Key]
		if !MatchesRequirement(r, v, ok) {
			return false
		}
	}
	for i := range term.MatchFields {
		r := &term.MatchFields[i]
		if r.Key != metav1.ObjectNameField || (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) {
			return false
		}
		if !MatchesRequirement(r, node.Name, true) {
			return false
		}
	}
	return true
}

// MatchesRequirement applies one requirement to a value v (present when
// ok).
func MatchesRequirement(r *corev1.NodeSelectorRequirement, v string, ok bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}
