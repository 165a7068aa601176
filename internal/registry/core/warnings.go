package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
)

// The warnings kube-apiserver sends about what these kinds accept but
// deprecate.

const deprecatedStorageClassAnnotation = `deprecated since v1.8; use "storageClassName" attribute instead`

func pvcWarnings(c, _ *corev1.PersistentVolumeClaim) []string {
	var out []string
	if _, ok := c.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", strategyAnnotationPath(corev1.BetaStorageClassAnnotation), deprecatedStorageClassAnnotation))
	}
	return append(out, podspec.ClaimSpecWarnings(&c.Spec, field.NewPath("spec"))...)
}

func strategyAnnotationPath(key string) *field.Path {
	return field.NewPath("metadata", "annotations").Key(key)
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
				if msg, ok := podspec.DeprecatedNodeLabel(e.Key); ok {
					out = append(out, fmt.Sprintf("%s: %s is %s", tp.Index(i).Child("matchExpressions").Index(j).Child("key"), e.Key, msg))
				}
			}
		}
	}
	for _, d := range []struct {
		set  bool
		name string
	}{
		{s.CephFS != nil, "cephfs"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk"},
		{s.ScaleIO != nil, "scaleIO"},
		{s.StorageOS != nil, "storageOS"},
		{s.Glusterfs != nil, "glusterfs"},
		{s.RBD != nil, "rbd"},
	} {
		if d.set {
			out = append(out, fmt.Sprintf("spec.%s: %s", d.name, podspec.DeprecatedPlugins[d.name]))
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

// podWarnings are a pod's warnings on create (podspec.PodWarnings); kube-apiserver
// sends none on a pod's update.
func podWarnings(pod, old *corev1.Pod) []string {
	if old != nil {
		return nil
	}
	return podspec.PodWarnings(pod)
}

// podTemplateWarnings warns of the template's spec on create and on an
// update that changes the template (one that moves the generation).
func podTemplateWarnings(t, old *corev1.PodTemplate) []string {
	if old != nil && apiequality.Semantic.DeepEqual(t.Template, old.Template) {
		return nil
	}
	return podspec.TemplateWarnings(&t.Template, templatePath)
}

// replicationControllerWarnings warns, on create, of a name that cannot be
// a host name and of the template's spec. An update that changes the spec
// warns of the template too, but (as kube-apiserver v1.37 does, passing
// its objects the wrong way round) of the template as it was before.
func replicationControllerWarnings(rc, old *corev1.ReplicationController) []string {
	tp := field.NewPath("spec", "template")
	if old == nil {
		return append(podspec.NameWarning(rc.Name), podspec.TemplateWarnings(rc.Spec.Template, tp)...)
	}
	if apiequality.Semantic.DeepEqual(rc.Spec, old.Spec) {
		return nil
	}
	return podspec.TemplateWarnings(old.Spec.Template, tp)
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
