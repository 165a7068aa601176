package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The preemption outcomes that end most messages of pods of priority 0.
func notHelpful(n, k int) string {
	return fmt.Sprintf(" preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", n, k)
}

func noVictims(n, k int) string {
	return fmt.Sprintf(" preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.", n, k)
}

// zoneNode is a Ready node labelled with its hostname and zone (none when
// zone is "").
func zoneNode(name, zone string) nodeSpec {
	n := readyNode(name)
	n.labels = map[string]string{corev1.LabelHostname: name}
	if zone != "" {
		n.labels[corev1.LabelTopologyZone] = zone
	}
	return n
}

func labeled(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func onNode(name string) podOpt {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: name} }
}

func term(key, app string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: key,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func affinityTo(terms ...corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	}
}

func antiAffinityTo(terms ...corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	}
}

func spread(key string, maxSkew int32, app string, mod ...func(*corev1.TopologySpreadConstraint)) podOpt {
	return func(p *corev1.Pod) {
		c := corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
		for _, m := range mod {
			m(&c)
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

func requesting(name corev1.ResourceName, q string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Containers[0].Resources.Requests == nil {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{}
		}
		p.Spec.Containers[0].Resources.Requests[name] = resource.MustParse(q)
		if name != corev1.ResourceEphemeralStorage {
			// Extended resources cannot be overcommitted: limits equal
			// requests.
			if p.Spec.Containers[0].Resources.Limits == nil {
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{}
			}
			p.Spec.Containers[0].Resources.Limits[name] = resource.MustParse(q)
		}
	}
}

func hostPortOpt(port int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports,
			corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
	}
}

// boundTo lists the pods bound to each node, by name.
func (e *env) boundTo() map[string][]string {
	e.t.Helper()
	l, err := e.pods.List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range l.Items {
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Name)
	}
	return out
}
