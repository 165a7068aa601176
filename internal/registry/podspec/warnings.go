package podspec

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The warnings kube-apiserver sends with a valid write of a pod or of a
// pod template: what the spec asks for that is deprecated, ignored or
// ambiguous. A pod's paths start at "spec" and "metadata"; a template's
// below the template's own path ("spec.template.spec…"). The order is
// kube-apiserver's, rule by rule, so that the Warning headers match.

// PodWarnings are the warnings of a pod's create: the deprecated AppArmor
// annotations (sent first, as kube-apiserver does while preparing the pod),
// a name that is no DNS label, then the rules of its spec. A pod's update
// warns of nothing.
func PodWarnings(pod *corev1.Pod) []string {
	out := podAppArmorWarnings(pod)
	if msgs := validation.IsDNS1123Label(pod.Name); len(msgs) > 0 {
		out = append(out, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(out, specWarnings(nil, &pod.Spec, &pod.ObjectMeta)...)
}

// TemplateWarnings are the warnings of the pod template t found at p (nil
// t warns of nothing).
func TemplateWarnings(t *corev1.PodTemplateSpec, p *field.Path) []string {
	if t == nil {
		return nil
	}
	return specWarnings(p, &t.Spec, &t.ObjectMeta)
}

// NameWarning is the warning of a workload whose name cannot be a DNS
// label, which the names and host names of its pods derive from (nil for
// a good name).
func NameWarning(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

// specWarnings runs every rule over a spec and its metadata; root is nil
// for a pod, the template's path otherwise (the AppArmor annotations of a
// template are checked here, a pod's by podAppArmorWarnings).
func specWarnings(root *field.Path, s *corev1.PodSpec, meta *metav1.ObjectMeta) []string {
	sp := root.Child("spec")
	out := nodeLabelWarnings(s, sp)
	out = append(out, deprecatedAnnotationWarnings(meta, root.Child("metadata", "annotations"))...)
	out = append(out, volumeWarnings(s.Volumes, sp.Child("volumes"))...)
	out = append(out, overlappingPathWarnings(s.Volumes)...)
	out = append(out, duplicateWarnings(s, sp)...)
	out = append(out, fractionalBytes(s.Overhead, sp.Child("overhead"), corev1.ResourceMemory, corev1.ResourceEphemeralStorage)...)
	out = append(out, containerWarnings(s, meta, root)...)
	out = append(out, portWarnings(s, sp)...)
	if g := s.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		out = append(out, fmt.Sprintf("%s: must be >= 0; negative values are invalid and will be treated as 1", sp.Child("terminationGracePeriodSeconds")))
	}
	out = append(out, podAffinityWarnings(s.Affinity, sp.Child("affinity"))...)
	return append(out, ipWarnings(s, sp)...)
}

// deprecatedNodeLabels are the node labels kube-apiserver warns about in
// pods' node selectors, affinities and spread constraints and in
// persistent volumes' node affinity, with what to use instead.
var deprecatedNodeLabels = map[string]string{
	"beta.kubernetes.io/arch":                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	"beta.kubernetes.io/os":                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	"failure-domain.beta.kubernetes.io/region":      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	"failure-domain.beta.kubernetes.io/zone":        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	"beta.kubernetes.io/instance-type":              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	"app.kubernetes.io/created-by":                  `deprecated since v1.9`,
	"scheduler.alpha.kubernetes.io/preferAvoidPods": `deprecated since v1.22; use Taints and Tolerations instead`,
	"node-role.kubernetes.io/master":                `use "node-role.kubernetes.io/control-plane" instead`,
}

// DeprecatedNodeLabel returns why a node label is deprecated, and whether
// it is.
func DeprecatedNodeLabel(key string) (string, bool) {
	msg, ok := deprecatedNodeLabels[key]
	return msg, ok
}

// nodeLabelWarnings warns of deprecated node labels in the node selector
// (in key order; kube-apiserver walks the map in no set order), the node
// affinity's terms (a preferred term's values must also be label values)
// and the spread constraints, and of spread constraints selecting nothing.
func nodeLabelWarnings(s *corev1.PodSpec, sp *field.Path) []string {
	var out []string
	keys := make([]string, 0, len(s.NodeSelector))
	for k := range s.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if msg, ok := DeprecatedNodeLabel(k); ok {
			out = append(out, fmt.Sprintf("%s: %s", sp.Child("nodeSelector").Key(k), msg))
		}
	}
	if a := s.Affinity; a != nil && a.NodeAffinity != nil {
		np := sp.Child("affinity", "nodeAffinity")
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			tp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, term := range r.NodeSelectorTerms {
				out = append(out, NodeSelectorTermWarnings(term, false, tp.Index(i))...)
			}
		}
		pp := np.Child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, NodeSelectorTermWarnings(term.Preference, true, pp.Index(i).Child("preference"))...)
		}
	}
	for i, c := range s.TopologySpreadConstraints {
		cp := sp.Child("topologySpreadConstraints").Index(i)
		if msg, ok := DeprecatedNodeLabel(c.TopologyKey); ok {
			out = append(out, fmt.Sprintf("%s: %s is %s", cp.Child("topologyKey"), c.TopologyKey, msg))
		}
		if c.LabelSelector == nil {
			out = append(out, nullSelector(cp.Child("labelSelector")))
		}
	}
	return out
}

// NodeSelectorTermWarnings warns of deprecated node labels in a term's
// match expressions and, with values set, of values that are no label
// values.
func NodeSelectorTermWarnings(term corev1.NodeSelectorTerm, values bool, p *field.Path) []string {
	var out []string
	for i, e := range term.MatchExpressions {
		ep := p.Child("matchExpressions").Index(i)
		if msg, ok := DeprecatedNodeLabel(e.Key); ok {
			out = append(out, fmt.Sprintf("%s: %s is %s", ep.Child("key"), e.Key, msg))
		}
		if !values {
			continue
		}
		for j, v := range e.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				out = append(out, fmt.Sprintf("%s: %s is invalid, %s", ep.Child("values").Index(j), v, msg))
			}
		}
	}
	return out
}

// deprecatedPodAnnotations are annotations that once did what fields do
// now, with what to use instead.
var deprecatedPodAnnotations = []struct{ key, msg string }{
	{"scheduler.alpha.kubernetes.io/critical-pod", `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{"security.alpha.kubernetes.io/sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
	{"security.alpha.kubernetes.io/unsafe-sysctls", `non-functional in v1.11+; use the "sysctls" field instead`},
}

func deprecatedAnnotationWarnings(meta *metav1.ObjectMeta, ap *field.Path) []string {
	var out []string
	for _, d := range deprecatedPodAnnotations {
		if _, ok := meta.Annotations[d.key]; ok {
			out = append(out, fmt.Sprintf("%s: %s", ap.Key(d.key), d.msg))
		}
	}
	return out
}

// fractionalBytes warns of each of the named quantities of l that is not
// a whole number of bytes, at p[name].
func fractionalBytes(l corev1.ResourceList, p *field.Path, names ...corev1.ResourceName) []string {
	var out []string
	for _, n := range names {
		if q, ok := l[n]; ok && q.MilliValue()%1000 != 0 {
			out = append(out, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p.Key(string(n)), q.String()))
		}
	}
	return out
}

// ClaimSpecWarnings warns of a claim spec's storage request and limit
// that are not whole bytes (p is the spec's path).
func ClaimSpecWarnings(s *corev1.PersistentVolumeClaimSpec, p *field.Path) []string {
	rp := p.Child("resources")
	out := fractionalBytes(s.Resources.Requests, rp.Child("requests"), corev1.ResourceStorage)
	return append(out, fractionalBytes(s.Resources.Limits, rp.Child("limits"), corev1.ResourceStorage)...)
}

// duplicateWarnings warns of host aliases repeating an IP and of image
// pull secrets repeating a name or naming nothing.
func duplicateWarnings(s *corev1.PodSpec, sp *field.Path) []string {
	var out []string
	ips := map[string]bool{}
	for i, a := range s.HostAliases {
		if ips[a.IP] {
			out = append(out, fmt.Sprintf("%s: duplicate ip %q", sp.Child("hostAliases").Index(i).Child("ip"), a.IP))
		}
		ips[a.IP] = true
	}
	names := map[string]bool{}
	for i, r := range s.ImagePullSecrets {
		if names[r.Name] {
			out = append(out, fmt.Sprintf("%s: duplicate name %q", sp.Child("imagePullSecrets").Index(i).Child("name"), r.Name))
		}
		names[r.Name] = true
	}
	for i, r := range s.ImagePullSecrets {
		if r.Name == "" {
			out = append(out, fmt.Sprintf("%s: invalid empty name %q", sp.Child("imagePullSecrets").Index(i).Child("name"), r.Name))
		}
	}
	return out
}

// podAffinityWarnings warns of pod (anti-)affinity terms with a null
// label selector, which match no pod.
func podAffinityWarnings(a *corev1.Affinity, ap *field.Path) []string {
	if a == nil {
		return nil
	}
	var out []string
	if pa := a.PodAffinity; pa != nil {
		out = append(out, affinityTermWarnings(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, ap.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		out = append(out, affinityTermWarnings(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, ap.Child("podAntiAffinity"))...)
	}
	return out
}

func affinityTermWarnings(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) []string {
	var out []string
	for i, t := range required {
		if t.LabelSelector == nil {
			out = append(out, nullSelector(p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector")))
		}
	}
	for i, t := range preferred {
		if t.PodAffinityTerm.LabelSelector == nil {
			out = append(out, nullSelector(p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector")))
		}
	}
	return out
}

func nullSelector(p *field.Path) string {
	return fmt.Sprintf("%s: a null labelSelector results in matching no pod", p)
}

// ipWarnings warns of DNS name servers and host alias IPs written in
// deprecated forms (leading zeros, IPv4-mapped IPv6…).
func ipWarnings(s *corev1.PodSpec, sp *field.Path) []string {
	var out []string
	if s.DNSConfig != nil {
		for i, ns := range s.DNSConfig.Nameservers {
			out = append(out, validation.GetWarningsForIP(sp.Child("dnsConfig", "nameservers").Index(i), ns)...)
		}
	}
	for i, a := range s.HostAliases {
		out = append(out, validation.GetWarningsForIP(sp.Child("hostAliases").Index(i).Child("ip"), a.IP)...)
	}
	return out
}
