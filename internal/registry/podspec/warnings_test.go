package podspec

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestTemplateWarnings: each rule of a pod template's warnings, worded and
// ordered as kube-apiserver v1.37.2 does (the kind packages' reference
// cases "pod spec warnings: …" hold its answers to whole objects).
func TestTemplateWarnings(t *testing.T) {
	const s = "spec.template.spec"
	const a = "spec.template.metadata.annotations"
	ctr := func(c corev1.Container) []corev1.Container {
		c.Name, c.Image = "app", "busybox"
		return []corev1.Container{c}
	}
	for name, tc := range map[string]struct {
		meta metav1.ObjectMeta
		spec corev1.PodSpec
		want []string
	}{
		"nothing to warn of": {spec: corev1.PodSpec{Containers: ctr(corev1.Container{})}},
		"deprecated node labels, in key order; terms; spread constraints": {
			spec: corev1.PodSpec{
				NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
						{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: "In", Values: []string{"a b"}}}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-role.kubernetes.io/master", Operator: "In", Values: []string{"ok", "a b"}}}}}},
				}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{TopologyKey: "beta.kubernetes.io/instance-type"}},
			},
			want: []string{
				s + `.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`,
				s + `.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
				s + `.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
				s + `.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: node-role.kubernetes.io/master is use "node-role.kubernetes.io/control-plane" instead`,
				s + `.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[1]: a b is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
				s + `.topologySpreadConstraints[0].topologyKey: beta.kubernetes.io/instance-type is deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
				s + `.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod`,
			},
		},
		"deprecated annotations; seccomp and AppArmor without their fields": {
			meta: metav1.ObjectMeta{Annotations: map[string]string{
				"scheduler.alpha.kubernetes.io/critical-pod":            "",
				"security.alpha.kubernetes.io/sysctls":                  "a=b",
				"seccomp.security.alpha.kubernetes.io/pod":              "runtime/default",
				"container.seccomp.security.alpha.kubernetes.io/app":    "runtime/default",
				"container.apparmor.security.beta.kubernetes.io/app":    "runtime/default",
				"container.apparmor.security.beta.kubernetes.io/other":  "runtime/default",
				"container.seccomp.security.alpha.kubernetes.io/absent": "runtime/default",
			}},
			spec: corev1.PodSpec{Containers: ctr(corev1.Container{})},
			want: []string{
				a + `[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
				a + `[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+; use the "sysctls" field instead`,
				a + `[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
				a + `[container.seccomp.security.alpha.kubernetes.io/app]: non-functional in v1.27+; use the "seccompProfile" field instead`,
				a + `[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead`,
			},
		},
		"fields replace the annotations; an AppArmor annotation equal to the pod's profile": {
			meta: metav1.ObjectMeta{Annotations: map[string]string{
				"seccomp.security.alpha.kubernetes.io/pod":           "runtime/default",
				"container.apparmor.security.beta.kubernetes.io/app": "localhost/p",
			}},
			spec: corev1.PodSpec{Containers: ctr(corev1.Container{}), SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile:  &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: new("p")},
			}},
		},
		"volume plugins, claim templates, overlapping paths": {
			spec: corev1.PodSpec{Containers: ctr(corev1.Container{}), Volumes: []corev1.Volume{
				{Name: "g", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{}, CephFS: &corev1.CephFSVolumeSource{}}},
				{Name: "e", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")}}}}}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cm"},
					Items:                []corev1.KeyToPath{{Key: "a", Path: "x"}, {Key: "b", Path: "x/y"}, {Key: "c", Path: "x/"}}}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{},
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Items: []corev1.KeyToPath{{Key: "a", Path: "t"}}}},
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}},
				}}}},
			}},
			want: []string{
				s + `.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+`,
				s + `.volumes[0].cephfs: deprecated in v1.28, non-functional in v1.31+`,
				s + `.volumes[1].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
				`volume "c" (ConfigMap "cm"): overlapping paths: "x/y" with "x"`,
				`volume "c" (ConfigMap "cm"): overlapping paths: "x" with "x"`,
				`volume "c" (ConfigMap "cm"): overlapping paths: "x" with "x/y"`,
				`volume "p" (Projected) has no sources provided`,
				`volume "p" (Projected): overlapping paths: "t" (ServiceAccountToken) with "t" (Secret "s")`,
			},
		},
		"duplicate host alias IPs and pull secrets, fractional overhead": {
			spec: corev1.PodSpec{Containers: ctr(corev1.Container{}),
				HostAliases:      []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.1"}},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "r"}, {Name: "r"}, {}},
				Overhead:         corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("0.5")},
			},
			want: []string{
				s + `.hostAliases[1].ip: duplicate ip "10.0.0.1"`,
				s + `.imagePullSecrets[1].name: duplicate name "r"`,
				s + `.imagePullSecrets[2].name: invalid empty name ""`,
				s + `.overhead[memory]: fractional byte value "500m" is invalid, must be an integer`,
			},
		},
		"containers: fractional bytes, environment variables hiding others": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1.5")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100m")}}}},
				Containers: ctr(corev1.Container{Env: []corev1.EnvVar{
					{Name: "A", Value: "1"}, {Name: "A", Value: "$(A):2"}, {Name: "A", Value: "3"}, {Name: "A", Value: "$(A)"},
					{Name: "A", Value: "$(A)", ValueFrom: &corev1.EnvVarSource{}}}}),
			},
			want: []string{
				s + `.initContainers[0].resources.limits[memory]: fractional byte value "100m" is invalid, must be an integer`,
				s + `.initContainers[0].resources.requests[ephemeral-storage]: fractional byte value "1500m" is invalid, must be an integer`,
				s + `.containers[0].env[2]: hides previous definition of "A", which may be dropped when using apply`,
				s + `.containers[0].env[3]: hides previous definition of "A", which may be dropped when using apply`,
				s + `.containers[0].env[4]: hides previous definition of "A", which may be dropped when using apply`,
			},
		},
		"ports: host IP without port, duplicate, overlapping, ambiguous; names": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 80, Protocol: "TCP"}}}},
				Containers: ctr(corev1.Container{Ports: []corev1.ContainerPort{
					{Name: "web", ContainerPort: 80, Protocol: "TCP", HostIP: "10.0.0.1"},
					{ContainerPort: 80, Protocol: "TCP"},
					{ContainerPort: 90, Protocol: "UDP", HostPort: 90},
					{ContainerPort: 90, Protocol: "UDP", HostPort: 90, HostIP: "10.0.0.1"},
					{ContainerPort: 90, Protocol: "TCP", HostPort: 91},
				}}),
			},
			want: []string{
				s + `.containers[0].ports[0]: hostIP set without hostPort: {Name:web HostPort:0 ContainerPort:80 Protocol:TCP HostIP:10.0.0.1}`,
				s + `.containers[0].ports[0]: overlapping port definition with ` + s + `.initContainers[0].ports[0]`,
				s + `.containers[0].ports[1]: duplicate port definition with ` + s + `.initContainers[0].ports[0]`,
				s + `.containers[0].ports[1]: overlapping port definition with ` + s + `.containers[0].ports[0]`,
				s + `.containers[0].ports[3]: dangerously ambiguous port definition with ` + s + `.containers[0].ports[2]`,
				s + `.containers[0].ports[0]: duplicate port name "web" with ` + s + `.initContainers[0].ports[0], services and probes that select ports by name will use ` + s + `.initContainers[0].ports[0]`,
			},
		},
		"negative grace period, null pod affinity selectors, IP forms": {
			spec: corev1.PodSpec{Containers: ctr(corev1.Container{}),
				TerminationGracePeriodSeconds: new(int64(-1)),
				Affinity: &corev1.Affinity{
					PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "k"}}},
					PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
						{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "k"}}}},
				},
				DNSConfig:   &corev1.PodDNSConfig{Nameservers: []string{"010.0.0.1"}},
				HostAliases: []corev1.HostAlias{{IP: "::ffff:10.0.0.1"}},
			},
			want: []string{
				s + `.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`,
				s + `.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod`,
				s + `.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod`,
				s + `.dnsConfig.nameservers[0]: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`,
				s + `.hostAliases[0].ip: non-standard IP address "::ffff:10.0.0.1" is invalid: use "10.0.0.1"`,
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := TemplateWarnings(&corev1.PodTemplateSpec{ObjectMeta: tc.meta, Spec: tc.spec}, field.NewPath("spec", "template"))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestPodWarnings: a pod's paths start at spec and metadata; its AppArmor
// annotations warn first (when they name no valid profile or another than
// the pod's; never for a Windows pod), then a name that is no DNS label.
func TestPodWarnings(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web.1", Annotations: map[string]string{
			"container.apparmor.security.beta.kubernetes.io/a": "localhost/ p",
			"container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
			"container.apparmor.security.beta.kubernetes.io/c": "unconfined",
		}},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}},
			Containers:      []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}},
			NodeSelector:    map[string]string{"beta.kubernetes.io/os": "linux"},
		},
	}
	want := []string{
		`metadata.annotations[container.apparmor.security.beta.kubernetes.io/a]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		`metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		`metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`,
		`spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
	}
	if got := PodWarnings(pod); !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	if got := PodWarnings(pod); len(got) != 2 {
		t.Errorf("windows pod: got %q, want the name's and the node selector's", got)
	}
}
