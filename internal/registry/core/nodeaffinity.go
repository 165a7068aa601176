package core

import (
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateVolumeNodeAffinity requires the required node selector of a
// volume's node affinity, and checks it.
func validateVolumeNodeAffinity(a *corev1.VolumeNodeAffinity, p *field.Path) field.ErrorList {
	if a.Required == nil {
		return field.ErrorList{field.Required(p.Child("required"), "must specify required node constraints")}
	}
	return strategy.ValidateNodeSelector(a.Required, p.Child("required"))
}

// betaToGALabel maps the deprecated node labels to the ones that replaced
// them: a volume's node affinity may switch from one to the other.
var betaToGALabel = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
}

// nodeAffinityEqualModuloBetaLabels reports whether a and old are the same
// node affinity, allowing requirement keys to have moved from a beta
// label to its GA one.
func nodeAffinityEqualModuloBetaLabels(a, old *corev1.VolumeNodeAffinity) bool {
	o := old.DeepCopy()
	if a != nil && a.Required != nil && o.Required != nil && len(a.Required.NodeSelectorTerms) == len(o.Required.NodeSelectorTerms) {
		for i := range o.Required.NodeSelectorTerms {
			nt, ot := &a.Required.NodeSelectorTerms[i], &o.Required.NodeSelectorTerms[i]
			upgradeKeys(nt.MatchExpressions, ot.MatchExpressions)
			upgradeKeys(nt.MatchFields, ot.MatchFields)
		}
	}
	return apiequality.Semantic.DeepEqual(a, o)
}

// upgradeKeys renames, in old, the beta keys that reqs (the new
// requirements at the same positions) name by their GA label.
func upgradeKeys(reqs, old []corev1.NodeSelectorRequirement) {
	if len(reqs) != len(old) {
		return
	}
	for i := range old {
		if old[i].Key != reqs[i].Key && betaToGALabel[old[i].Key] == reqs[i].Key {
			old[i].Key = reqs[i].Key
		}
	}
}
