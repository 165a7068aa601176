package podspec

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// visitContainers calls visit with every container of s and its path
// below sp, in kube-apiserver's order: init containers, containers, then
// ephemeral containers.
func visitContainers(s *corev1.PodSpec, sp *field.Path, visit func(c *corev1.Container, p *field.Path)) {
	for i := range s.InitContainers {
		visit(&s.InitContainers[i], sp.Child("initContainers").Index(i))
	}
	for i := range s.Containers {
		visit(&s.Containers[i], sp.Child("containers").Index(i))
	}
	for i := range s.EphemeralContainers {
		visit((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon), sp.Child("ephemeralContainers").Index(i))
	}
}

// containerWarnings warns of the seccomp annotations a profile field does
// not replace (the pod's, then each container's), of a template's AppArmor
// annotations, of memory and ephemeral storage in fractional bytes, and of
// environment variables that hide an earlier one of the same name.
func containerWarnings(s *corev1.PodSpec, meta *metav1.ObjectMeta, root *field.Path) []string {
	var out []string
	ap := root.Child("metadata", "annotations")
	if s.SecurityContext == nil || s.SecurityContext.SeccompProfile == nil {
		if _, ok := meta.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			out = append(out, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap.Key(corev1.SeccompPodAnnotationKey)))
		}
	}
	var podAppArmor *corev1.AppArmorProfile
	if s.SecurityContext != nil {
		podAppArmor = s.SecurityContext.AppArmorProfile
	}
	visitContainers(s, root.Child("spec"), func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name
			if _, ok := meta.Annotations[key]; ok {
				out = append(out, fmt.Sprintf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, ap.Key(key)))
			}
		}
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		value, annotated := meta.Annotations[key]
		if root != nil && annotated && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) &&
			(podAppArmor == nil || !apiequality.Semantic.DeepEqual(podAppArmor, appArmorFromAnnotation(value))) {
			out = append(out, appArmorWarning(ap.Key(key)))
		}
		out = append(out, fractionalBytes(c.Resources.Limits, p.Child("resources", "limits"), corev1.ResourceMemory)...)
		out = append(out, fractionalBytes(c.Resources.Requests, p.Child("resources", "requests"), corev1.ResourceMemory)...)
		out = append(out, fractionalBytes(c.Resources.Limits, p.Child("resources", "limits"), corev1.ResourceEphemeralStorage)...)
		out = append(out, fractionalBytes(c.Resources.Requests, p.Child("resources", "requests"), corev1.ResourceEphemeralStorage)...)
		out = append(out, envWarnings(c.Env, p.Child("env"))...)
	})
	return out
}

// envWarnings warns of a variable that redefines an earlier one without
// building on it ("$(NAME)" in its value): apply may drop the earlier one.
func envWarnings(env []corev1.EnvVar, ep *field.Path) []string {
	var out []string
	seen := map[string]bool{}
	for i, e := range env {
		if !seen[e.Name] {
			seen[e.Name] = true
			continue
		}
		ref := "$(" + e.Name + ")"
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			out = append(out, fmt.Sprintf("%s: hides previous definition of %q, which may be dropped when using apply", ep.Index(i), e.Name))
		}
	}
	return out
}

func appArmorWarning(p *field.Path) string {
	return fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, p)
}

// appArmorFromAnnotation is the profile field a deprecated AppArmor
// annotation's value stands for (nil for a value that stands for none).
func appArmorFromAnnotation(v string) *corev1.AppArmorProfile {
	switch {
	case v == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case v == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) && len(v) > len(corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}

// podAppArmorWarnings warns, for a pod that is not a Windows pod, of each
// container's AppArmor annotation that its own field does not replace when
// the annotation names no valid profile or one other than the pod's.
func podAppArmorWarnings(pod *corev1.Pod) []string {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil
	}
	var podProfile *corev1.AppArmorProfile
	if sc := pod.Spec.SecurityContext; sc != nil {
		podProfile = sc.AppArmorProfile
	}
	var out []string
	ap := field.NewPath("metadata", "annotations")
	visitContainers(&pod.Spec, nil, func(c *corev1.Container, _ *field.Path) {
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		value, ok := pod.Annotations[key]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		profile := appArmorFromAnnotation(value)
		if profile != nil && !validLocalhostProfile(profile) {
			profile = nil
		}
		if profile == nil || !apiequality.Semantic.DeepEqual(profile, podProfile) {
			out = append(out, appArmorWarning(ap.Key(key)))
		}
	})
	return out
}

// validLocalhostProfile reports whether a profile's localhost name (if
// any) is one the profile field accepts: not padded with white space and
// at most 4095 bytes.
func validLocalhostProfile(p *corev1.AppArmorProfile) bool {
	if p.LocalhostProfile == nil {
		return true
	}
	n := *p.LocalhostProfile
	return strings.TrimSpace(n) == n && n != "" && len(n) <= 4095
}

// portWarnings warns of host IPs without a host port, of ports that two
// containers (or one twice) define alike, overlapping or ambiguously, and
// of port names used twice.
func portWarnings(s *corev1.PodSpec, sp *field.Path) []string {
	type defined struct {
		p    *field.Path
		port corev1.ContainerPort
	}
	var out []string
	byNumber := map[string][]defined{}
	visitContainers(s, sp, func(c *corev1.Container, cp *field.Path) {
		for i, port := range c.Ports {
			pp := cp.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				out = append(out, fmt.Sprintf("%s: hostIP set without hostPort: {Name:%s HostPort:%d ContainerPort:%d Protocol:%s HostIP:%s}",
					pp, port.Name, port.HostPort, port.ContainerPort, port.Protocol, port.HostIP))
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, o := range byNumber[k] {
				if msg := portConflict(port, o.port); msg != "" {
					out = append(out, fmt.Sprintf("%s: %s port definition with %s", pp, msg, o.p))
				}
			}
			byNumber[k] = append(byNumber[k], defined{pp, port})
		}
	})
	named := map[string]*field.Path{}
	visitContainers(s, sp, func(c *corev1.Container, cp *field.Path) {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			pp := cp.Child("ports").Index(i)
			if o, ok := named[port.Name]; ok {
				out = append(out, fmt.Sprintf("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s", pp, port.Name, o, o))
			} else {
				named[port.Name] = pp
			}
		}
	})
	return out
}

// portConflict says how two definitions of one container port and
// protocol conflict: "duplicate" (same host IP and port), "overlapping"
// (one without host port), "dangerously ambiguous" (same host port, only
// one with a host IP), or "" for no conflict.
func portConflict(a, b corev1.ContainerPort) string {
	switch {
	case a.HostIP == b.HostIP && a.HostPort == b.HostPort:
		return "duplicate"
	case a.HostPort == 0 || b.HostPort == 0:
		return "overlapping"
	case a.HostPort == b.HostPort && (a.HostIP == "") != (b.HostIP == ""):
		return "dangerously ambiguous"
	}
	return ""
}
