package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The reasons of InterPodAffinity, kube-scheduler's.
const (
	reasonPodAffinity     = "node(s) didn't match pod affinity rules"
	reasonPodAntiAffinity = "node(s) didn't match pod anti-affinity rules"
	reasonExistingAnti    = "node(s) didn't satisfy existing pods anti-affinity rules"
)

func hasRequiredAntiAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

func hasPodAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// affinityTerm is a pod affinity term ready to match pods: the label
// selector with the owner's matchLabelKeys and mismatchLabelKeys folded
// in, the namespaces it names (the owner's when it names none and has no
// namespace selector) and the namespace selector (nil for none).
type affinityTerm struct {
	selector    labels.Selector
	namespaces  map[string]bool
	nsSelector  labels.Selector
	topologyKey string
	weight      int32
}

// newAffinityTerm builds the term of owner; a selector that does not
// parse (validation refuses them) matches nothing.
func newAffinityTerm(owner *corev1.Pod, t *corev1.PodAffinityTerm, weight int32) affinityTerm {
	at := affinityTerm{topologyKey: t.TopologyKey, weight: weight, namespaces: map[string]bool{}}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		sel = labels.Nothing()
	}
	at.selector = withLabelKeys(sel, owner.Labels, t.MatchLabelKeys, t.MismatchLabelKeys)
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		at.namespaces[owner.Namespace] = true
	}
	for _, ns := range t.Namespaces {
		at.namespaces[ns] = true
	}
	if t.NamespaceSelector != nil {
		if at.nsSelector, err = metav1.LabelSelectorAsSelector(t.NamespaceSelector); err != nil {
			at.nsSelector = labels.Nothing()
		}
	}
	return at
}

// withLabelKeys adds to sel, for every key of matchKeys the owner has, the
// requirement key in (owner's value), and for mismatchKeys key notin
// (owner's value): what kube-apiserver folds into the selector at creation.
func withLabelKeys(sel labels.Selector, own map[string]string, matchKeys, mismatchKeys []string) labels.Selector {
	add := func(keys []string, op selection.Operator) {
		for _, k := range keys {
			v, ok := own[k]
			if !ok {
				continue
			}
			if r, err := labels.NewRequirement(k, op, []string{v}); err == nil {
				sel = sel.Add(*r)
			}
		}
	}
	add(matchKeys, selection.In)
	add(mismatchKeys, selection.NotIn)
	return sel
}

// matches reports whether pod (whose namespace has nsLabels) is selected
// by the term.
func (t *affinityTerm) matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if !t.namespaces[pod.Namespace] && (t.nsSelector == nil || !t.nsSelector.Matches(nsLabels)) {
		return false
	}
	return t.selector.Matches(labels.Set(pod.Labels))
}

func requiredTerms(owner *corev1.Pod, terms []corev1.PodAffinityTerm) []affinityTerm {
	out := make([]affinityTerm, 0, len(terms))
	for i := range terms {
		out = append(out, newAffinityTerm(owner, &terms[i], 1))
	}
	return out
}

func weightedTerms(owner *corev1.Pod, terms []corev1.WeightedPodAffinityTerm) []affinityTerm {
	out := make([]affinityTerm, 0, len(terms))
	for i := range terms {
		out = append(out, newAffinityTerm(owner, &terms[i].PodAffinityTerm, terms[i].Weight))
	}
	return out
}

// podTerms are the four lists of a pod's affinity terms.
type podTerms struct {
	affinity, antiAffinity                   []affinityTerm
	preferredAffinity, preferredAntiAffinity []affinityTerm
}

func termsOf(pod *corev1.Pod) podTerms {
	var pt podTerms
	a := pod.Spec.Affinity
	if a == nil {
		return pt
	}
	if pa := a.PodAffinity; pa != nil {
		pt.affinity = requiredTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		pt.preferredAffinity = weightedTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		pt.antiAffinity = requiredTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		pt.preferredAntiAffinity = weightedTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return pt
}

// topologyPair is one topology domain: a node label key and value.
type topologyPair struct{ key, value string }

// pairCounts counts pods per topology domain; zero entries are deleted.
type pairCounts map[topologyPair]int64

func (m pairCounts) add(node *corev1.Node, key string, delta int64) {
	v, ok := node.Labels[key]
	if !ok {
		return
	}
	tp := topologyPair{key, v}
	if m[tp] += delta; m[tp] == 0 {
		delete(m, tp)
	}
}

// matchesAll reports whether pod matches every term (false without
// terms).
func matchesAll(terms []affinityTerm, pod *corev1.Pod, nsLabels labels.Set) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].matches(pod, nsLabels) {
			return false
		}
	}
	return true
}
