package podsecurity_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	intstrpkg "k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	ps "github.com/setpoint-dev/setpoint/internal/admission/podsecurity"
)

// restrictedPod is a pod every level admits: the cases change one thing.
func restrictedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// checkCase is one pod and what baseline and restricted (latest) say of
// it: "" admits, else the violations as a refusal words them.
type checkCase struct {
	name                 string
	mutate               func(p *corev1.Pod)
	baseline, restricted string
	// unitOnly: the pod is not valid on a server (API validation refuses
	// it before admission), so only the evaluator sees it.
	unitOnly bool
}

func csc(p *corev1.Pod) *corev1.SecurityContext { return p.Spec.Containers[0].SecurityContext }

const seccompMissing = `seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

var checkCases = []checkCase{
	{name: "compliant", mutate: func(p *corev1.Pod) {}},
	// baseline: hostProcess
	{name: "hostprocess-pod", mutate: func(p *corev1.Pod) {
		p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		p.Spec.HostNetwork = true
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}}
		p.Spec.Containers[0].SecurityContext = nil
	},
		baseline:   `host namespaces (hostNetwork=true), hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`,
		restricted: `host namespaces (hostNetwork=true), hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`},
	{name: "hostprocess-false", mutate: func(p *corev1.Pod) {
		p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(false)}}
		p.Spec.Containers[0].SecurityContext = nil
	}},
	{name: "hostprocess-container", unitOnly: true, mutate: func(p *corev1.Pod) {
		csc(p).WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
	},
		baseline:   `hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)`,
		restricted: `hostProcess (container "c" must not set securityContext.windowsOptions.hostProcess=true)`},
	// baseline: host namespaces
	{name: "host-namespaces", mutate: func(p *corev1.Pod) { p.Spec.HostNetwork, p.Spec.HostPID, p.Spec.HostIPC = true, true, true },
		baseline:   `host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)`,
		restricted: `host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)`},
	{name: "host-pid", mutate: func(p *corev1.Pod) { p.Spec.HostPID = true },
		baseline: `host namespaces (hostPID=true)`, restricted: `host namespaces (hostPID=true)`},
	// baseline: privileged
	{name: "privileged", mutate: func(p *corev1.Pod) { csc(p).Privileged, csc(p).AllowPrivilegeEscalation = ptr.To(true), nil },
		baseline:   `privileged (container "c" must not set securityContext.privileged=true)`,
		restricted: `privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)`},
	{name: "privileged-false", mutate: func(p *corev1.Pod) { csc(p).Privileged = ptr.To(false) }},
	// capabilities
	{name: "capabilities-non-default", mutate: func(p *corev1.Pod) { csc(p).Capabilities.Add = []corev1.Capability{"SYS_TIME", "NET_ADMIN"} },
		baseline:   `non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)`,
		restricted: `unrestricted capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)`},
	{name: "capabilities-default", mutate: func(p *corev1.Pod) { csc(p).Capabilities.Add = []corev1.Capability{"CHOWN"} },
		restricted: `unrestricted capabilities (container "c" must not include "CHOWN" in securityContext.capabilities.add)`},
	{name: "capabilities-net-bind", mutate: func(p *corev1.Pod) { csc(p).Capabilities.Add = []corev1.Capability{"NET_BIND_SERVICE"} }},
	{name: "capabilities-no-drop", mutate: func(p *corev1.Pod) { csc(p).Capabilities = nil },
		restricted: `unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])`},
	{name: "capabilities-both", mutate: func(p *corev1.Pod) {
		csc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}, Drop: []corev1.Capability{"KILL"}}
	},
		baseline:   `non-default capabilities (container "c" must not include "NET_RAW" in securityContext.capabilities.add)`,
		restricted: `unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_RAW" in securityContext.capabilities.add)`},
	// hostPath volumes and restricted volume types
	{name: "hostpath", mutate: func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
	},
		baseline:   `hostPath volumes (volume "host")`,
		restricted: `restricted volume types (volume "host" uses restricted volume type "hostPath")`},
	{name: "volume-types", mutate: func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/x"}}},
			{Name: "i", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}},
			{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		}
	},
		restricted: `restricted volume types (volumes "n", "i" use restricted volume types "iscsi", "nfs")`},
	{name: "volume-allowed", mutate: func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}},
			{Name: "pvc", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "x"}}},
			{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
		}
	}},
	// host ports
	{name: "host-ports", mutate: func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 443, HostPort: 10443}}
	},
		baseline:   `hostPort (container "c" uses hostPorts 10443, 8080)`,
		restricted: `hostPort (container "c" uses hostPorts 10443, 8080)`},
	{name: "container-port-only", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}} }},
	// probe and lifecycle hosts
	{name: "probe-host", mutate: func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr(80)}}}
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "example.com", Port: intstr(80)}}}
	},
		baseline:   `probe or lifecycle host (container "c" uses probe or lifecycle hosts "10.0.0.1", "example.com")`,
		restricted: `probe or lifecycle host (container "c" uses probe or lifecycle hosts "10.0.0.1", "example.com")`},
	// AppArmor
	{name: "apparmor-unconfined", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	},
		baseline:   `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")`,
		restricted: `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")`},
	{name: "apparmor-runtime-default", mutate: func(p *corev1.Pod) {
		csc(p).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	}},
	{name: "apparmor-annotation", unitOnly: true, mutate: func(p *corev1.Pod) {
		p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
		csc(p).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	},
		baseline:   `forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")`,
		restricted: `forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined"")`},
	// SELinux
	{name: "selinux", mutate: func(p *corev1.Pod) {
		csc(p).SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t", User: "system_u", Role: "system_r"}
	},
		baseline:   `seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)`,
		restricted: `seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)`},
	{name: "selinux-allowed", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t", Level: "s0:c123,c456"}
	}},
	// /proc mount
	{name: "procmount-user-namespace", mutate: func(p *corev1.Pod) {
		p.Spec.HostUsers = ptr.To(false)
		csc(p).ProcMount = ptr.To(corev1.UnmaskedProcMount)
	},
		restricted: `procMount (container "c" must not set securityContext.procMount to "Unmasked")`},
	{name: "procmount-host-users", unitOnly: true, mutate: func(p *corev1.Pod) { csc(p).ProcMount = ptr.To(corev1.UnmaskedProcMount) },
		baseline:   `procMount (container "c" must not set securityContext.procMount to "Unmasked")`,
		restricted: `procMount (container "c" must not set securityContext.procMount to "Unmasked")`},
	{name: "procmount-default", mutate: func(p *corev1.Pod) { csc(p).ProcMount = ptr.To(corev1.DefaultProcMount) }},
	// seccomp
	{name: "seccomp-pod-unconfined", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
	},
		baseline:   `seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")`,
		restricted: `seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")`},
	{name: "seccomp-container-unconfined", mutate: func(p *corev1.Pod) {
		csc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	},
		baseline:   `seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")`,
		restricted: `seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")`},
	{name: "seccomp-missing", mutate: func(p *corev1.Pod) { p.Spec.SecurityContext.SeccompProfile = nil }, restricted: seccompMissing},
	{name: "seccomp-container-localhost", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.SeccompProfile = nil
		csc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("profiles/p.json")}
	}},
	// sysctls
	{name: "sysctls", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}, {Name: "net.ipv4.tcp_notsent_lowat", Value: "1"}, {Name: "kernel.sem", Value: "1"}}
	},
		baseline:   `forbidden sysctls (kernel.msgmax, kernel.sem)`,
		restricted: `forbidden sysctls (kernel.msgmax, kernel.sem)`},
	{name: "sysctls-safe", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65000"}, {Name: "net.ipv4.tcp_slow_start_after_idle", Value: "0"}}
	}},
	// restricted: privilege escalation
	{name: "privilege-escalation-unset", mutate: func(p *corev1.Pod) { csc(p).AllowPrivilegeEscalation = nil },
		restricted: `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)`},
	{name: "privilege-escalation-true", mutate: func(p *corev1.Pod) { csc(p).AllowPrivilegeEscalation = ptr.To(true) },
		restricted: `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)`},
	{name: "privilege-escalation-init", mutate: func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
		csc(p).AllowPrivilegeEscalation = nil
	},
		restricted: `allowPrivilegeEscalation != false (containers "i", "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "i" must set securityContext.capabilities.drop=["ALL"])`},
	// restricted: running as non-root
	{name: "run-as-non-root-unset", mutate: func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = nil },
		restricted: `runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)`},
	{name: "run-as-non-root-pod-false", mutate: func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = ptr.To(false) },
		restricted: `runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)`},
	{name: "run-as-non-root-container-false", mutate: func(p *corev1.Pod) { csc(p).RunAsNonRoot = ptr.To(false) },
		restricted: `runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false)`},
	{name: "run-as-non-root-container-true", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.RunAsNonRoot = nil
		csc(p).RunAsNonRoot = ptr.To(true)
	}},
	{name: "run-as-non-root-user-namespace", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.RunAsNonRoot = nil
		p.Spec.HostUsers = ptr.To(false)
	}},
	// restricted: runAsUser
	{name: "run-as-user-0", mutate: func(p *corev1.Pod) {
		p.Spec.SecurityContext.RunAsUser = ptr.To[int64](0)
		csc(p).RunAsUser = ptr.To[int64](0)
	},
		restricted: `runAsUser=0 (pod and container "c" must not set runAsUser=0)`},
	{name: "run-as-user-1000", mutate: func(p *corev1.Pod) { csc(p).RunAsUser = ptr.To[int64](1000) }},
	// several checks: kube-apiserver's order
	{name: "many", mutate: func(p *corev1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.SecurityContext = nil
		p.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	},
		baseline:   `host namespaces (hostNetwork=true), hostPath volumes (volume "h"), privileged (container "c" must not set securityContext.privileged=true)`,
		restricted: `host namespaces (hostNetwork=true), privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), restricted volume types (volume "h" uses restricted volume type "hostPath"), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` + seccompMissing},
}

func (c checkCase) pod() *corev1.Pod {
	p := restrictedPod(c.name)
	c.mutate(p)
	return p
}

func newPlugin(t *testing.T, cfg *ps.Config) *ps.Plugin {
	t.Helper()
	p, err := ps.New(cfg, ps.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChecks: every baseline and restricted check, failing and passing,
// with kube-apiserver's reasons and details.
func TestChecks(t *testing.T) {
	p := newPlugin(t, nil)
	for _, c := range checkCases {
		t.Run(c.name, func(t *testing.T) {
			pod := c.pod()
			for _, l := range []struct {
				level ps.Level
				want  string
			}{{ps.Baseline, c.baseline}, {ps.Restricted, c.restricted}, {ps.Privileged, ""}} {
				got := ps.Details(p.Check(ps.LevelVersion{Level: l.level, Version: ps.Latest}, &pod.ObjectMeta, &pod.Spec))
				if got != l.want {
					t.Errorf("%s:\n got %s\nwant %s", l.level, got, l.want)
				}
			}
		})
	}
}

// TestCheckVersions: a version runs the checks as they were at that
// version; versions past the newest check run the newest.
func TestCheckVersions(t *testing.T) {
	p := newPlugin(t, nil)
	cases := []struct {
		name    string
		level   ps.Level
		version ps.Version
		mutate  func(p *corev1.Pod)
		want    string
	}{
		{"capabilities before v1.22 are baseline's", ps.Restricted, ps.V1(21), func(p *corev1.Pod) { csc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}} },
			`non-default capabilities (container "c" must not include "NET_RAW" in securityContext.capabilities.add)`},
		{"capabilities from v1.22", ps.Restricted, ps.V1(22), func(p *corev1.Pod) { csc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}} },
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_RAW" in securityContext.capabilities.add)`},
		{"no runAsUser check before v1.23", ps.Restricted, ps.V1(22), func(p *corev1.Pod) { csc(p).RunAsUser = ptr.To[int64](0) }, ``},
		{"runAsUser from v1.23", ps.Restricted, ps.V1(23), func(p *corev1.Pod) { csc(p).RunAsUser = ptr.To[int64](0) }, `runAsUser=0 (container "c" must not set runAsUser=0)`},
		{"no privilege escalation check before v1.8", ps.Restricted, ps.V1(7), func(p *corev1.Pod) { csc(p).AllowPrivilegeEscalation = nil }, ``},
		{"seccomp annotations before v1.19", ps.Baseline, ps.V1(18), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined", "container.seccomp.security.alpha.kubernetes.io/c": "runtime/default"}
			p.Spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}, `seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")`},
		{"seccomp fields from v1.19", ps.Baseline, ps.V1(19), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}
		}, ``},
		{"container_engine_t before v1.31", ps.Baseline, ps.V1(30), func(p *corev1.Pod) {
			p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
		}, `seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "container_engine_t")`},
		{"no probe host check before v1.34", ps.Baseline, ps.V1(33), func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "h", Port: intstr(1)}}}
		}, ``},
		{"user namespaces relax runAsNonRoot only from v1.35", ps.Restricted, ps.V1(34), func(p *corev1.Pod) {
			p.Spec.HostUsers = ptr.To(false)
			p.Spec.SecurityContext.RunAsNonRoot = nil
		}, `runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)`},
		{"procMount in a user namespace before v1.35", ps.Baseline, ps.V1(34), func(p *corev1.Pod) {
			p.Spec.HostUsers = ptr.To(false)
			csc(p).ProcMount = ptr.To(corev1.UnmaskedProcMount)
		}, `procMount (container "c" must not set securityContext.procMount to "Unmasked")`},
		{"v1.37 sysctls not safe at v1.36", ps.Baseline, ps.V1(36), func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.tcp_notsent_lowat"}, {Name: "net.ipv4.tcp_rmem"}}
		}, `forbidden sysctls (net.ipv4.tcp_notsent_lowat)`},
		{"windows exempt from restricted fields from v1.25", ps.Restricted, ps.V1(25), func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
			p.Spec.SecurityContext.SeccompProfile = nil
			p.Spec.Containers[0].SecurityContext = nil
		}, ``},
		{"windows not exempt before v1.25", ps.Restricted, ps.V1(24), func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
			p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}, `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)`},
		{"a future version is the newest", ps.Baseline, ps.V1(99), func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.tcp_notsent_lowat"}, {Name: "kernel.msgmax"}}
		}, `forbidden sysctls (kernel.msgmax)`},
		{"v1.0 restricted", ps.Restricted, ps.V1(0), func(p *corev1.Pod) {
			p.Spec.SecurityContext = nil
			p.Spec.Containers[0].SecurityContext = nil
		}, `runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := restrictedPod("p")
			c.mutate(pod)
			got := ps.Details(p.Check(ps.LevelVersion{Level: c.level, Version: c.version}, &pod.ObjectMeta, &pod.Spec))
			if got != c.want {
				t.Errorf("%s:%s\n got %s\nwant %s", c.level, c.version, got, c.want)
			}
		})
	}
}

func intstr(port int) intstrpkg.IntOrString { return intstrpkg.FromInt32(int32(port)) }
