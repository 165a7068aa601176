package podsecurity

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// restrictedChecks are the checks the restricted standard adds, by the ids
// and versions of Kubernetes' pod-security-admission, with the baseline
// checks each replaces.
func restrictedChecks() []check {
	return []check{
		{id: "allowPrivilegeEscalation", level: Restricted, versions: []versionedCheck{
			{since: V1(8), fn: allowPrivilegeEscalation},
			{since: V1(25), fn: exceptWindows(allowPrivilegeEscalation)},
		}},
		{id: "capabilities_restricted", level: Restricted, versions: []versionedCheck{
			{since: V1(22), fn: capabilitiesRestricted, overrides: []string{"capabilities_baseline"}},
			{since: V1(25), fn: exceptWindows(capabilitiesRestricted), overrides: []string{"capabilities_baseline"}},
		}},
		{id: "procMount_restricted", level: Restricted, versions: []versionedCheck{
			{since: V1(35), fn: procMount, overrides: []string{"procMount"}},
		}},
		{id: "restrictedVolumes", level: Restricted, versions: []versionedCheck{
			{since: V1(0), fn: restrictedVolumes, overrides: []string{"hostPathVolumes"}},
		}},
		{id: "runAsNonRoot", level: Restricted, versions: []versionedCheck{
			{since: V1(0), fn: runAsNonRoot},
			{since: V1(35), fn: exceptUserNamespaced(runAsNonRoot)},
		}},
		{id: "runAsUser", level: Restricted, versions: []versionedCheck{
			{since: V1(23), fn: runAsUser},
			{since: V1(35), fn: exceptUserNamespaced(runAsUser)},
		}},
		{id: "seccompProfile_restricted", level: Restricted, versions: []versionedCheck{
			{since: V1(19), fn: seccompProfileRestricted, overrides: []string{"seccompProfile_baseline"}},
			{since: V1(25), fn: exceptWindows(seccompProfileRestricted), overrides: []string{"seccompProfile_baseline"}},
		}},
	}
}

// exceptWindows passes Windows pods (v1.25+), whose API validation already
// forbids the Linux-only fields the check asks for.
func exceptWindows(fn checkFunc) checkFunc {
	return func(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
		if windows(spec) {
			return nil
		}
		return fn(meta, spec)
	}
}

// exceptUserNamespaced passes pods in their own user namespace (v1.35+).
func exceptUserNamespaced(fn checkFunc) checkFunc {
	return func(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
		if userNamespaced(spec) {
			return nil
		}
		return fn(meta, spec)
	}
}

// allowPrivilegeEscalation: every container sets it to false.
func allowPrivilegeEscalation(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"allowPrivilegeEscalation != false", containers(bad) + " must set securityContext.allowPrivilegeEscalation=false"}
}

// capabilitiesRestricted: every container drops ALL and adds nothing but
// NET_BIND_SERVICE.
func capabilitiesRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var noDropAll, adding []string
	caps := map[string]bool{}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			noDropAll = append(noDropAll, c.Name)
			return
		}
		dropsAll := false
		for _, cp := range c.SecurityContext.Capabilities.Drop {
			if cp == "ALL" {
				dropsAll = true
				break
			}
		}
		if !dropsAll {
			noDropAll = append(noDropAll, c.Name)
		}
		added := false
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if cp != "NET_BIND_SERVICE" {
				added = true
				caps[string(cp)] = true
			}
		}
		if added {
			adding = append(adding, c.Name)
		}
	})
	var parts []string
	if len(noDropAll) > 0 {
		parts = append(parts, containers(noDropAll)+` must set securityContext.capabilities.drop=["ALL"]`)
	}
	if len(adding) > 0 {
		parts = append(parts, fmt.Sprintf("%s must not include %s in securityContext.capabilities.add", containers(adding), quoted(sortedSet(caps))))
	}
	if len(parts) == 0 {
		return nil
	}
	return &Violation{"unrestricted capabilities", strings.Join(parts, "; ")}
}

// restrictedVolumes: only configMap, csi, downwardAPI, emptyDir,
// ephemeral, image, persistentVolumeClaim, projected and secret volumes.
func restrictedVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	types := map[string]bool{}
	for _, v := range spec.Volumes {
		s := v.VolumeSource
		if s.ConfigMap != nil || s.CSI != nil || s.DownwardAPI != nil || s.EmptyDir != nil || s.Ephemeral != nil ||
			s.Image != nil || s.PersistentVolumeClaim != nil || s.Projected != nil || s.Secret != nil {
			continue
		}
		bad = append(bad, v.Name)
		types[volumeType(s)] = true
	}
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"restricted volume types", fmt.Sprintf("%s %s %s %s %s", plural("volume", "volumes", len(bad)), quoted(bad),
		plural("uses", "use", len(bad)), plural("restricted volume type", "restricted volume types", len(types)), quoted(sortedSet(types)))}
}

// volumeType names a restricted volume's source by its field.
func volumeType(s corev1.VolumeSource) string {
	named := []struct {
		set  bool
		name string
	}{
		{s.HostPath != nil, "hostPath"}, {s.GCEPersistentDisk != nil, "gcePersistentDisk"},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore"}, {s.GitRepo != nil, "gitRepo"},
		{s.NFS != nil, "nfs"}, {s.ISCSI != nil, "iscsi"}, {s.Glusterfs != nil, "glusterfs"}, {s.RBD != nil, "rbd"},
		{s.FlexVolume != nil, "flexVolume"}, {s.Cinder != nil, "cinder"}, {s.CephFS != nil, "cephfs"},
		{s.Flocker != nil, "flocker"}, {s.FC != nil, "fc"}, {s.AzureFile != nil, "azureFile"},
		{s.VsphereVolume != nil, "vsphereVolume"}, {s.Quobyte != nil, "quobyte"}, {s.AzureDisk != nil, "azureDisk"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk"}, {s.PortworxVolume != nil, "portworxVolume"},
		{s.ScaleIO != nil, "scaleIO"}, {s.StorageOS != nil, "storageos"},
	}
	for _, n := range named {
		if n.set {
			return n.name
		}
	}
	return "unknown"
}

// runAsNonRoot: the pod or every container sets runAsNonRoot=true, and
// none sets it to false.
func runAsNonRoot(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	pod, podTrue := false, false
	if sc := spec.SecurityContext; sc != nil && sc.RunAsNonRoot != nil {
		pod, podTrue = !*sc.RunAsNonRoot, *sc.RunAsNonRoot
	}
	var explicit, implicit []string
	visitContainers(spec, func(c *corev1.Container) {
		switch sc := c.SecurityContext; {
		case sc != nil && sc.RunAsNonRoot != nil:
			if !*sc.RunAsNonRoot {
				explicit = append(explicit, c.Name)
			}
		case !podTrue:
			implicit = append(implicit, c.Name)
		}
	})
	if pod || len(explicit) > 0 {
		return &Violation{"runAsNonRoot != true", setters(pod, explicit) + " must not set securityContext.runAsNonRoot=false"}
	}
	if len(implicit) > 0 {
		return &Violation{"runAsNonRoot != true", "pod or " + containers(implicit) + " must set securityContext.runAsNonRoot=true"}
	}
	return nil
}

// runAsUser (v1.23+): neither the pod nor a container runs as user 0.
func runAsUser(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	root := func(u *int64) bool { return u != nil && *u == 0 }
	pod := spec.SecurityContext != nil && root(spec.SecurityContext.RunAsUser)
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && root(c.SecurityContext.RunAsUser) {
			bad = append(bad, c.Name)
		}
	})
	if !pod && len(bad) == 0 {
		return nil
	}
	return &Violation{"runAsUser=0", setters(pod, bad) + " must not set runAsUser=0"}
}

// seccompProfileRestricted (v1.19+): the pod or every container sets the
// runtime default or a localhost seccomp profile, and none another one.
func seccompProfileRestricted(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	values := map[string]bool{}
	pod, podSet := false, false
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if validSeccomp(sc.SeccompProfile.Type) {
			podSet = true
		} else {
			pod = true
			values[string(sc.SeccompProfile.Type)] = true
		}
	}
	var explicit, implicit []string
	visitContainers(spec, func(c *corev1.Container) {
		switch sc := c.SecurityContext; {
		case sc != nil && sc.SeccompProfile != nil:
			if !validSeccomp(sc.SeccompProfile.Type) {
				explicit = append(explicit, c.Name)
				values[string(sc.SeccompProfile.Type)] = true
			}
		case !podSet:
			implicit = append(implicit, c.Name)
		}
	})
	if pod || len(explicit) > 0 {
		return &Violation{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", setters(pod, explicit), quoted(sortedSet(values)))}
	}
	if len(implicit) > 0 {
		return &Violation{"seccompProfile", "pod or " + containers(implicit) + ` must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`}
	}
	return nil
}
