package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// conditionTypes are the deletion conditions, always all reported.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// okCondition is each type's False condition (Kubernetes' reasons and
// messages).
var okCondition = map[corev1.NamespaceConditionType][2]string{
	corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
	corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
	corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
	corev1.NamespaceFinalizersRemaining:      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// conditions collects the outcome of one pass over a namespace's content.
type conditions struct {
	failed map[corev1.NamespaceConditionType]corev1.NamespaceCondition
}

func (c *conditions) fail(t corev1.NamespaceConditionType, reason, message string) {
	if c.failed == nil {
		c.failed = map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	}
	c.failed[t] = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}

func (c *conditions) discovery(err error) {
	c.fail(corev1.NamespaceDeletionDiscoveryFailure, "DiscoveryFailed", "Discovery failed for some groups: "+err.Error())
}

func (c *conditions) parsing(err error) {
	c.fail(corev1.NamespaceDeletionGVParsingFailure, "GroupVersionParsingFailed", "Failed to parse some group versions: "+err.Error())
}

func (c *conditions) deletion(errs []error) {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	c.fail(corev1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
		fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(errs), strings.Join(msgs, ", ")))
}

// remaining reports the objects left per resource and the finalizers
// holding them.
func (c *conditions) remaining(objects map[schema.GroupResource]int, finalizers map[string]int) {
	if len(objects) > 0 {
		var parts []string
		for gr, n := range objects {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gr.Resource, gr.Group, n))
		}
		sort.Strings(parts)
		c.fail(corev1.NamespaceContentRemaining, "SomeResourcesRemain", "Some resources are remaining: "+strings.Join(parts, ", "))
	}
	if len(finalizers) > 0 {
		var parts []string
		for f, n := range finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		c.fail(corev1.NamespaceFinalizersRemaining, "SomeFinalizersRemain",
			"Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", "))
	}
}

// apply sets every deletion condition on ns, keeping the transition time
// of those unchanged, and reports whether anything changed.
func (c *conditions) apply(ns *corev1.Namespace, now metav1.Time) bool {
	changed := false
	for _, t := range conditionTypes {
		want, ok := c.failed[t]
		if !ok {
			want = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, Reason: okCondition[t][0], Message: okCondition[t][1]}
		}
		i := indexOf(ns.Status.Conditions, t)
		if i >= 0 {
			cur := ns.Status.Conditions[i]
			if cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
				continue
			}
		}
		want.LastTransitionTime = now
		changed = true
		if i >= 0 {
			ns.Status.Conditions[i] = want
		} else {
			ns.Status.Conditions = append(ns.Status.Conditions, want)
		}
	}
	return changed
}

func indexOf(cs []corev1.NamespaceCondition, t corev1.NamespaceConditionType) int {
	for i := range cs {
		if cs[i].Type == t {
			return i
		}
	}
	return -1
}
