package persistentvolume

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// compareInt is the Gt and Lt operators of node selectors: the label and
// the single value are integers.
func compareInt(e corev1.NodeSelectorRequirement, v string) bool {
	if len(e.Values) != 1 {
		return false
	}
	label, err1 := strconv.ParseInt(v, 10, 64)
	bound, err2 := strconv.ParseInt(e.Values[0], 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if e.Operator == corev1.NodeSelectorOpGt {
		return label > bound
	}
	return label < bound
}
