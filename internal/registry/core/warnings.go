package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The warnings kube-apiserver sends about what these kinds accept but
// deprecate.

const deprecatedStorageClassAnnotation = `deprecated since v1.8; use "storageClassName" attribute instead`

func pvcWarnings(c, _ *corev1.PersistentVolumeClaim) []string {
	var out []string
	if _, ok := c.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", strategyAnnotationPath(corev1.BetaStorageClassAnnotation), deprecatedStorageClassAnnotation))
	}
	rp := field.NewPath("spec", "resources")
	out = append(out, fractionalBytes(c.Spec.Resources.Requests[corev1.ResourceStorage], rp.Child("requests"))...)
	return append(out, fractionalBytes(c.Spec.Resources.Limits[corev1.ResourceStorage], rp.Child("limits"))...)
}

func strategyAnnotationPath(key string) *field.Path {
	return field.NewPath("metadata", "annotations").Key(key)
}

func fractionalBytes(q resource.Quantity, p *field.Path) []string {
	if q.MilliValue()%1000 == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", p.Key(string(corev1.ResourceStorage)), q.String())}
}

// deprecatedNodeLabels are node labels whose use in a volume's node
// affinity is warned about.
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

func pvWarnings(pv, _ *corev1.PersistentVolume) []string {
	var out []string
	for _, a := range []struct{ key, msg string }{
		{corev1.BetaStorageClassAnnotation, deprecatedStorageClassAnnotation},
		{mountOptionsAnnotation, `deprecated since v1.31; use "mountOptions" attribute instead`},
	} {
		if _, ok := pv.Annotations[a.key]; ok {
			out = append(out, fmt.Sprintf("%s: %s", strategyAnnotationPath(a.key), a.msg))
		}
	}
	s := &pv.Spec
	if s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		out = append(out, "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.")
	}
	if a := s.NodeAffinity; a != nil && a.Required != nil {
		tp := field.NewPath("spec", "nodeAffinity", "required", "nodeSelectorTerms")
		for i, term := range a.Required.NodeSelectorTerms {
			for j, e := range term.MatchExpressions {
				if msg, ok := deprecatedNodeLabels[e.Key]; ok {
					out = append(out, fmt.Sprintf("%s: %s is %s", tp.Index(i).Child("matchExpressions").Index(j).Child("key"), e.Key, msg))
				}
			}
		}
	}
	for _, d := range []struct {
		set        bool
		name, when string
	}{
		{s.CephFS != nil, "cephfs", "deprecated in v1.28, non-functional in v1.31+"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+"},
		{s.ScaleIO != nil, "scaleIO", "deprecated in v1.16, non-functional in v1.22+"},
		{s.StorageOS != nil, "storageOS", "deprecated in v1.22, non-functional in v1.25+"},
		{s.Glusterfs != nil, "glusterfs", "deprecated in v1.25, non-functional in v1.26+"},
		{s.RBD != nil, "rbd", "deprecated in v1.28, non-functional in v1.31+"},
	} {
		if d.set {
			out = append(out, fmt.Sprintf("spec.%s: %s", d.name, d.when))
		}
	}
	return out
}

const enforceMountableSecrets = "kubernetes.io/enforce-mountable-secrets"

// serviceAccountWarnings warns when the enforce-mountable-secrets
// annotation is newly set.
func serviceAccountWarnings(sa, old *corev1.ServiceAccount) []string {
	if old != nil {
		if _, ok := old.Annotations[enforceMountableSecrets]; ok {
			return nil
		}
	}
	if _, ok := sa.Annotations[enforceMountableSecrets]; !ok {
		return nil
	}
	return []string{fmt.Sprintf("%s: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets",
		strategyAnnotationPath(enforceMountableSecrets))}
}

// replicationControllerWarnings warns, on create, of a name that cannot be
// a host name.
func replicationControllerWarnings(rc, old *corev1.ReplicationController) []string {
	if old != nil {
		return nil
	}
	if msgs := validation.IsDNS1123Label(rc.Name); len(msgs) > 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

// resourceQuotaWarnings warns, on create, of requests above limits.
func resourceQuotaWarnings(q, old *corev1.ResourceQuota) []string {
	if old != nil {
		return nil
	}
	var out []string
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage} {
		reqName := corev1.ResourceName("requests." + string(r))
		req, hasReq := q.Spec.Hard[reqName]
		if !hasReq && (r == corev1.ResourceCPU || r == corev1.ResourceMemory) {
			if req, hasReq = q.Spec.Hard[r]; hasReq {
				reqName = r
			}
		}
		limName := corev1.ResourceName("limits." + string(r))
		if lim, hasLim := q.Spec.Hard[limName]; hasReq && hasLim && req.Cmp(lim) > 0 {
			out = append(out, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)", reqName, req.String(), limName, lim.String()))
		}
	}
	return out
}
