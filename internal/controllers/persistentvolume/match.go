package persistentvolume

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
)

// findBestMatch returns the volume to bind the claim to: a volume
// pre-bound to it (claimRef naming it) when that volume suits it, else the
// smallest Available volume that satisfies it (class, access modes,
// volume mode, selector, capacity, and the selected node's labels against
// the volume's node affinity). With delay (WaitForFirstConsumer) and no
// node selected yet, only pre-bound volumes are considered.
func (b *binder) findBestMatch(c *corev1.PersistentVolumeClaim, delay bool) *corev1.PersistentVolume {
	var node *corev1.Node
	if name := c.Annotations[volumeutil.AnnSelectedNode]; name != "" {
		if n, ok, _ := b.nodeInf.Indexer().GetByKey(name); ok {
			node = n
		}
	}
	var sel labels.Selector
	if c.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(c.Spec.Selector)
		if err != nil {
			return nil
		}
		sel = s
	}
	want := c.Spec.Resources.Requests[corev1.ResourceStorage]
	var best *corev1.PersistentVolume
	for _, pv := range b.volumes.list() {
		if pv.DeletionTimestamp != nil || volumeModeMismatch(pv, c) || !accessModesContain(pv.Spec.AccessModes, c.Spec.AccessModes) {
			continue
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		if size.Cmp(want) < 0 {
			continue
		}
		if pv.Spec.ClaimRef != nil {
			if volumeutil.BoundToClaim(pv, c) && (node == nil || nodeFits(pv, node)) {
				return pv // pre-bound
			}
			continue
		}
		if (delay && node == nil) || pv.Status.Phase != corev1.VolumeAvailable ||
			volumeutil.VolumeClass(pv) != volumeutil.ClaimClass(c) ||
			(sel != nil && !sel.Matches(labels.Set(pv.Labels))) || (node != nil && !nodeFits(pv, node)) {
			continue
		}
		if best == nil || size.Cmp(best.Spec.Capacity[corev1.ResourceStorage]) < 0 ||
			(size.Cmp(best.Spec.Capacity[corev1.ResourceStorage]) == 0 && pv.Name < best.Name) {
			best = pv
		}
	}
	return best
}

// satisfies is kube's checkVolumeSatisfyClaim for a claim naming its
// volume.
func satisfies(pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) error {
	want, have := c.Spec.Resources.Requests[corev1.ResourceStorage], pv.Spec.Capacity[corev1.ResourceStorage]
	switch {
	case have.Cmp(want) < 0:
		return errors.New("requested PV is too small")
	case volumeutil.VolumeClass(pv) != volumeutil.ClaimClass(c):
		return errors.New("storageClassName does not match")
	case volumeModeMismatch(pv, c):
		return errors.New("incompatible volumeMode")
	case !accessModesContain(pv.Spec.AccessModes, c.Spec.AccessModes):
		return errors.New("incompatible accessMode")
	}
	return nil
}

func volumeModeMismatch(pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) bool {
	mode := func(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
		if m == nil {
			return corev1.PersistentVolumeFilesystem
		}
		return *m
	}
	return mode(pv.Spec.VolumeMode) != mode(c.Spec.VolumeMode)
}

func accessModesContain(have, want []corev1.PersistentVolumeAccessMode) bool {
	for _, m := range want {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// nodeFits reports whether the node's labels satisfy the volume's required
// node affinity (any term; every expression of a term).
func nodeFits(pv *corev1.PersistentVolume, n *corev1.Node) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		if termMatches(term, n) {
			return true
		}
	}
	return false
}

func termMatches(term corev1.NodeSelectorTerm, n *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, e := range term.MatchExpressions {
		v, has := n.Labels[e.Key]
		if !requirementHolds(e, v, has) {
			return false
		}
	}
	for _, e := range term.MatchFields {
		if e.Key != "metadata.name" || !requirementHolds(e, n.Name, true) {
			return false
		}
	}
	return true
}

func requirementHolds(e corev1.NodeSelectorRequirement, v string, has bool) bool {
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		return has && compareInt(e, v)
	}
	return false
}
