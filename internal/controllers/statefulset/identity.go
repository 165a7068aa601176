package statefulset

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podNameRe splits a member pod's name into its set's name and ordinal.
var podNameRe = regexp.MustCompile("(.*)-([0-9]+)$")

// parentAndOrdinal returns the set name and ordinal pod's name encodes, or
// ("", -1) when it encodes none.
func parentAndOrdinal(pod *corev1.Pod) (string, int) {
	m := podNameRe.FindStringSubmatch(pod.Name)
	if len(m) < 3 {
		return "", -1
	}
	i, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(i)
}

// ordinalOf returns pod's ordinal, -1 if it has none.
func ordinalOf(pod *corev1.Pod) int {
	_, o := parentAndOrdinal(pod)
	return o
}

// startOrdinal is spec.ordinals.start (0 by default).
func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

// endOrdinal is the last ordinal the set wants.
func endOrdinal(set *appsv1.StatefulSet) int { return startOrdinal(set) + replicasOf(set) - 1 }

// inRange reports whether pod's ordinal is one the set wants.
func inRange(pod *corev1.Pod, set *appsv1.StatefulSet) bool {
	o := ordinalOf(pod)
	return o >= startOrdinal(set) && o <= endOrdinal(set)
}

// replicasOf is spec.replicas with its default of 1.
func replicasOf(set *appsv1.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

func podName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// claimName is the name of the PVC of template claim for ordinal:
// <template>-<set>-<ordinal>.
func claimName(set *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", claim.Name, set.Name, ordinal)
}

// isMemberOf reports whether pod's name makes it one of set's.
func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, _ := parentAndOrdinal(pod)
	return parent == set.Name
}

// identityMatches reports whether pod has its ordinal's name, the set's
// namespace and the pod-name label.
func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, o := parentAndOrdinal(pod)
	return o >= 0 && parent == set.Name && pod.Name == podName(set, o) &&
		pod.Namespace == set.Namespace && pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches reports whether pod mounts, under each claim template's
// name, its ordinal's PVC.
func storageMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	o := ordinalOf(pod)
	if o < 0 {
		return false
	}
	vols := make(map[string]corev1.Volume, len(pod.Spec.Volumes))
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		v, ok := vols[t.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claimName(set, t, o) {
			return false
		}
	}
	return true
}

// claimsFor returns the PVCs pod needs, by template name: each template
// named for pod's ordinal, in the set's namespace, labelled with the
// template's labels plus the selector's matchLabels.
func claimsFor(set *appsv1.StatefulSet, pod *corev1.Pod) map[string]*corev1.PersistentVolumeClaim {
	o := ordinalOf(pod)
	out := make(map[string]*corev1.PersistentVolumeClaim, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		t := &set.Spec.VolumeClaimTemplates[i]
		c := t.DeepCopy()
		c.Name = claimName(set, t, o)
		c.Namespace = set.Namespace
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(c.Labels, set.Spec.Selector.MatchLabels)
		}
		out[t.Name] = c
	}
	return out
}

// updateStorage makes pod mount its ordinal's PVCs under the templates'
// names, replacing volumes of those names and keeping the others.
func updateStorage(set *appsv1.StatefulSet, pod *corev1.Pod) {
	claims := claimsFor(set, pod)
	vols := make([]corev1.Volume, 0, len(claims)+len(pod.Spec.Volumes))
	for i := range set.Spec.VolumeClaimTemplates {
		name := set.Spec.VolumeClaimTemplates[i].Name
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claims[name].Name},
		}})
	}
	for _, v := range pod.Spec.Volumes {
		if _, ok := claims[v.Name]; !ok {
			vols = append(vols, v)
		}
	}
	pod.Spec.Volumes = vols
}

// updateIdentity sets pod's name, namespace, pod-name and pod-index labels
// from its ordinal.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	o := ordinalOf(pod)
	pod.Name = podName(set, o)
	pod.Namespace = set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(o)
}

// newPod returns the pod of ordinal built from set's template: identity,
// hostname <pod>, subdomain serviceName, the PVC volumes, set as its
// controller.
func newPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	t := set.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            podName(set, ordinal),
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, setGVK)},
		},
		Spec: t.Spec,
	}
	updateIdentity(set, pod)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	updateStorage(set, pod)
	return pod
}

// newVersionedPod returns the pod of ordinal at the revision it should
// have: the current revision below the partition, the update revision
// from it on.
func newVersionedPod(currentSet, updateSet *appsv1.StatefulSet, currentRev, updateRev string, ordinal int) *corev1.Pod {
	s := currentSet.Spec.UpdateStrategy
	if (s.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.RollingUpdate == nil &&
		ordinal < startOrdinal(currentSet)+int(currentSet.Status.CurrentReplicas)) ||
		(s.RollingUpdate != nil && s.RollingUpdate.Partition != nil &&
			ordinal < startOrdinal(currentSet)+int(*s.RollingUpdate.Partition)) {
		pod := newPod(currentSet, ordinal)
		setPodRevision(pod, currentRev)
		return pod
	}
	pod := newPod(updateSet, ordinal)
	setPodRevision(pod, updateRev)
	return pod
}

func setPodRevision(pod *corev1.Pod, rev string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetRevisionLabel] = rev
}

func podRevision(pod *corev1.Pod) string { return pod.Labels[appsv1.StatefulSetRevisionLabel] }
