package podsecurity

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// baselineChecks are the checks of the baseline standard, by the ids and
// versions of Kubernetes' pod-security-admission.
func baselineChecks() []check {
	return []check{
		{id: "appArmorProfile", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: appArmorProfile}}},
		{id: "capabilities_baseline", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: capabilitiesBaseline}}},
		{id: "hostNamespaces", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: hostNamespaces}}},
		{id: "hostPathVolumes", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: hostPathVolumes}}},
		{id: "hostPorts", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: hostPorts}}},
		{id: "hostProbesAndHostLifecycle", level: Baseline, versions: []versionedCheck{{since: V1(34), fn: probeAndLifecycleHosts}}},
		{id: "privileged", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: privileged}}},
		{id: "procMount", level: Baseline, versions: []versionedCheck{
			{since: V1(0), fn: procMount},
			{since: V1(35), fn: procMountUnlessUserNamespaced},
		}},
		{id: "seLinuxOptions", level: Baseline, versions: []versionedCheck{
			{since: V1(0), fn: seLinuxOptions(seLinuxTypes1_0)},
			{since: V1(31), fn: seLinuxOptions(seLinuxTypes1_31)},
		}},
		{id: "seccompProfile_baseline", level: Baseline, versions: []versionedCheck{
			{since: V1(0), fn: seccompAnnotations},
			{since: V1(19), fn: seccompProfileBaseline},
		}},
		{id: "sysctls", level: Baseline, versions: []versionedCheck{
			{since: V1(0), fn: sysctls(safeSysctls(0))},
			{since: V1(27), fn: sysctls(safeSysctls(27))},
			{since: V1(29), fn: sysctls(safeSysctls(29))},
			{since: V1(32), fn: sysctls(safeSysctls(32))},
			{since: V1(37), fn: sysctls(safeSysctls(37))},
		}},
		{id: "windowsHostProcess", level: Baseline, versions: []versionedCheck{{since: V1(0), fn: windowsHostProcess}}},
	}
}

// setters names who set a forbidden value: "pod", `container "c"`, joined
// with " and ".
func setters(pod bool, bad []string) string {
	var parts []string
	if pod {
		parts = append(parts, "pod")
	}
	if len(bad) > 0 {
		parts = append(parts, containers(bad))
	}
	return strings.Join(parts, " and ")
}

// windowsHostProcess: no Windows HostProcess pod or container.
func windowsHostProcess(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	hostProcess := func(o *corev1.WindowsSecurityContextOptions) bool {
		return o != nil && o.HostProcess != nil && *o.HostProcess
	}
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && hostProcess(c.SecurityContext.WindowsOptions) {
			bad = append(bad, c.Name)
		}
	})
	pod := spec.SecurityContext != nil && hostProcess(spec.SecurityContext.WindowsOptions)
	if !pod && len(bad) == 0 {
		return nil
	}
	return &Violation{"hostProcess", setters(pod, bad) + " must not set securityContext.windowsOptions.hostProcess=true"}
}

// hostNamespaces: no host network, PID or IPC namespace.
func hostNamespaces(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var set []string
	if spec.HostNetwork {
		set = append(set, "hostNetwork=true")
	}
	if spec.HostPID {
		set = append(set, "hostPID=true")
	}
	if spec.HostIPC {
		set = append(set, "hostIPC=true")
	}
	if len(set) == 0 {
		return nil
	}
	return &Violation{"host namespaces", strings.Join(set, ", ")}
}

// privileged: no privileged container.
func privileged(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"privileged", containers(bad) + " must not set securityContext.privileged=true"}
}

// defaultCapabilities may be added in baseline.
var defaultCapabilities = map[corev1.Capability]bool{
	"AUDIT_WRITE": true, "CHOWN": true, "DAC_OVERRIDE": true, "FOWNER": true, "FSETID": true, "KILL": true,
	"MKNOD": true, "NET_BIND_SERVICE": true, "SETFCAP": true, "SETGID": true, "SETPCAP": true, "SETUID": true,
	"SYS_CHROOT": true,
}

// capabilitiesBaseline: only the default capabilities may be added.
func capabilitiesBaseline(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	caps := map[string]bool{}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
			return
		}
		ok := true
		for _, cp := range c.SecurityContext.Capabilities.Add {
			if !defaultCapabilities[cp] {
				ok = false
				caps[string(cp)] = true
			}
		}
		if !ok {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"non-default capabilities", fmt.Sprintf("%s must not include %s in securityContext.capabilities.add",
		containers(bad), quoted(sortedSet(caps)))}
}

// hostPathVolumes: no hostPath volume.
func hostPathVolumes(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			bad = append(bad, v.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"hostPath volumes", plural("volume", "volumes", len(bad)) + " " + quoted(bad)}
}

// hostPorts: no container port bound on the host. The ports are listed
// as sorted strings, as Kubernetes lists them.
func hostPorts(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	ports := map[string]bool{}
	visitContainers(spec, func(c *corev1.Container) {
		ok := true
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				ok = false
				ports[strconv.Itoa(int(p.HostPort))] = true
			}
		}
		if !ok {
			bad = append(bad, c.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"hostPort", fmt.Sprintf("%s %s %s %s", containers(bad), plural("uses", "use", len(bad)),
		plural("hostPort", "hostPorts", len(ports)), strings.Join(sortedSet(ports), ", "))}
}

// probeAndLifecycleHosts (v1.34+): probes and lifecycle handlers must not
// name a host.
func probeAndLifecycleHosts(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	bad, hosts := map[string]bool{}, map[string]bool{}
	note := func(c *corev1.Container, h ...string) {
		for _, host := range h {
			if host != "" {
				bad[c.Name], hosts[host] = true, true
			}
		}
	}
	visitContainers(spec, func(c *corev1.Container) {
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p != nil {
				note(c, httpHost(p.HTTPGet), tcpHost(p.TCPSocket))
			}
		}
		if c.Lifecycle != nil {
			for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h != nil {
					note(c, httpHost(h.HTTPGet), tcpHost(h.TCPSocket))
				}
			}
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"probe or lifecycle host", fmt.Sprintf("%s %s %s %s", containers(sortedSet(bad)), plural("uses", "use", len(bad)),
		plural("probe or lifecycle host", "probe or lifecycle hosts", len(hosts)), quoted(sortedSet(hosts)))}
}

func httpHost(a *corev1.HTTPGetAction) string {
	if a == nil {
		return ""
	}
	return a.Host
}

func tcpHost(a *corev1.TCPSocketAction) string {
	if a == nil {
		return ""
	}
	return a.Host
}

// appArmorProfile: AppArmor profiles (fields and the deprecated
// annotations) may only be the runtime default or a localhost profile.
func appArmorProfile(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	allowed := func(p *corev1.AppArmorProfile) bool {
		return p == nil || p.Type == corev1.AppArmorProfileTypeRuntimeDefault || p.Type == corev1.AppArmorProfileTypeLocalhost
	}
	values := map[string]bool{}
	pod := false
	if spec.SecurityContext != nil && !allowed(spec.SecurityContext.AppArmorProfile) {
		pod = true
		values[string(spec.SecurityContext.AppArmorProfile.Type)] = true
	}
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && !allowed(c.SecurityContext.AppArmorProfile) {
			bad = append(bad, c.Name)
			values[string(c.SecurityContext.AppArmorProfile.Type)] = true
		}
	})
	var annotations []string
	for k, v := range meta.Annotations {
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && v != "" &&
			v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			annotations = append(annotations, fmt.Sprintf("%s=%q", k, v))
		}
	}
	who := setters(pod, bad)
	list := sortedSet(values)
	if len(annotations) > 0 {
		slices.Sort(annotations)
		list = append(list, annotations...)
		if who != "" {
			who += " and "
		}
		who += plural("annotation", "annotations", len(annotations))
	}
	if who == "" {
		return nil
	}
	return &Violation{plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(list)),
		fmt.Sprintf("%s must not set AppArmor profile type to %s", who, quoted(list))}
}

var (
	seLinuxTypes1_0  = map[string]bool{"": true, "container_t": true, "container_init_t": true, "container_kvm_t": true}
	seLinuxTypes1_31 = map[string]bool{"": true, "container_t": true, "container_init_t": true, "container_kvm_t": true, "container_engine_t": true}
)

// seLinuxOptions: the SELinux type must be one of the allowed ones, and
// user and role must not be set.
func seLinuxOptions(types map[string]bool) checkFunc {
	return func(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
		badTypes := map[string]bool{}
		user, role := false, false
		valid := func(o *corev1.SELinuxOptions) bool {
			ok := true
			if !types[o.Type] {
				ok = false
				badTypes[o.Type] = true
			}
			if o.User != "" {
				ok, user = false, true
			}
			if o.Role != "" {
				ok, role = false, true
			}
			return ok
		}
		pod := spec.SecurityContext != nil && spec.SecurityContext.SELinuxOptions != nil && !valid(spec.SecurityContext.SELinuxOptions)
		var bad []string
		visitContainers(spec, func(c *corev1.Container) {
			if c.SecurityContext != nil && c.SecurityContext.SELinuxOptions != nil && !valid(c.SecurityContext.SELinuxOptions) {
				bad = append(bad, c.Name)
			}
		})
		if !pod && len(bad) == 0 {
			return nil
		}
		var what []string
		if len(badTypes) > 0 {
			what = append(what, plural("type", "types", len(badTypes))+" "+quoted(sortedSet(badTypes)))
		}
		if user {
			what = append(what, "user may not be set")
		}
		if role {
			what = append(what, "role may not be set")
		}
		return &Violation{"seLinuxOptions", fmt.Sprintf("%s set forbidden securityContext.seLinuxOptions: %s", setters(pod, bad), strings.Join(what, "; "))}
	}
}

// procMount: containers must keep the default /proc mount.
func procMount(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	var bad []string
	types := map[string]bool{}
	visitContainers(spec, func(c *corev1.Container) {
		if c.SecurityContext != nil && c.SecurityContext.ProcMount != nil && *c.SecurityContext.ProcMount != corev1.DefaultProcMount {
			bad = append(bad, c.Name)
			types[string(*c.SecurityContext.ProcMount)] = true
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"procMount", fmt.Sprintf("%s must not set securityContext.procMount to %s", containers(bad), quoted(sortedSet(types)))}
}

// procMountUnlessUserNamespaced (v1.35+ baseline): any /proc mount in a
// user namespace.
func procMountUnlessUserNamespaced(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	if userNamespaced(spec) {
		return nil
	}
	return procMount(meta, spec)
}

const (
	seccompPodAnnotation       = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotation = "container.seccomp.security.alpha.kubernetes.io/"
)

// seccompAnnotations (v1.0–v1.18): the deprecated seccomp annotations may
// only name the runtime default or a localhost profile.
func seccompAnnotations(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	valid := func(v string) bool {
		return v == corev1.SeccompProfileRuntimeDefault || v == corev1.DeprecatedSeccompProfileDockerDefault ||
			strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix)
	}
	bad := map[string]bool{}
	if v, ok := meta.Annotations[seccompPodAnnotation]; ok && !valid(v) {
		bad[fmt.Sprintf("%s=%q", seccompPodAnnotation, v)] = true
	}
	visitContainers(spec, func(c *corev1.Container) {
		k := seccompContainerAnnotation + c.Name
		if v, ok := meta.Annotations[k]; ok && !valid(v) {
			bad[fmt.Sprintf("%s=%q", k, v)] = true
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return &Violation{"seccompProfile", fmt.Sprintf("forbidden %s %s", plural("annotation", "annotations", len(bad)), strings.Join(sortedSet(bad), ", "))}
}

func validSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeRuntimeDefault || t == corev1.SeccompProfileTypeLocalhost
}

// seccompProfileBaseline (v1.19+): a seccomp profile, where set, is the
// runtime default or a localhost profile.
func seccompProfileBaseline(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
	values := map[string]bool{}
	pod := false
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
		pod = true
		values[string(sc.SeccompProfile.Type)] = true
	}
	var bad []string
	visitContainers(spec, func(c *corev1.Container) {
		if sc := c.SecurityContext; sc != nil && sc.SeccompProfile != nil && !validSeccomp(sc.SeccompProfile.Type) {
			bad = append(bad, c.Name)
			values[string(sc.SeccompProfile.Type)] = true
		}
	})
	if !pod && len(bad) == 0 {
		return nil
	}
	return &Violation{"seccompProfile", fmt.Sprintf("%s must not set securityContext.seccompProfile.type to %s", setters(pod, bad), quoted(sortedSet(values)))}
}

// safeSysctls are the sysctls allowed from each version on.
func safeSysctls(minor int) map[string]bool {
	steps := []struct {
		since int
		names []string
	}{
		{0, []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"}},
		{27, []string{"net.ipv4.ip_local_reserved_ports"}},
		{29, []string{"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}},
		{32, []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}},
		{37, []string{"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"}},
	}
	out := map[string]bool{}
	for _, s := range steps {
		if s.since <= minor {
			for _, n := range s.names {
				out[n] = true
			}
		}
	}
	return out
}

// sysctls: only the safe sysctls, listed in the pod's order.
func sysctls(safe map[string]bool) checkFunc {
	return func(_ *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation {
		if spec.SecurityContext == nil {
			return nil
		}
		var bad []string
		for _, s := range spec.SecurityContext.Sysctls {
			if !safe[s.Name] {
				bad = append(bad, s.Name)
			}
		}
		if len(bad) == 0 {
			return nil
		}
		return &Violation{"forbidden sysctls", strings.Join(bad, ", ")}
	}
}
