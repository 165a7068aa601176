package deployment

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Annotations the controller writes on ReplicaSets and Deployments. kubectl
// rollout history and undo read them.
const (
	// RevisionAnnotation is the rollout sequence number of a ReplicaSet,
	// and on the Deployment the revision of its current ReplicaSet.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists, comma-separated, the earlier
	// revisions a ReplicaSet served before a rollback made it current again.
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is spec.replicas of the Deployment when the
	// ReplicaSet was last sized by it.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is spec.replicas + maxSurge at that time; it
	// is the base of proportional scaling.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"

	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// skipCopy are the Deployment annotations not copied to its ReplicaSets.
var skipCopy = map[string]bool{
	lastAppliedAnnotation:               true,
	RevisionAnnotation:                  true,
	RevisionHistoryAnnotation:           true,
	DesiredReplicasAnnotation:           true,
	MaxReplicasAnnotation:               true,
	"deprecated.deployment.rollback.to": true,
}

// revision returns the revision annotation of an object's annotations, 0
// when absent or unparsable.
func revision(ann map[string]string) int64 {
	v, err := strconv.ParseInt(ann[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// maxRevision is the highest revision among rss.
func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, revision(rs.Annotations))
	}
	return m
}

// setNewRSAnnotations brings rs's annotations in line for the Deployment's
// new ReplicaSet (rs is the caller's copy): the Deployment's own
// annotations except skipCopy, the revision newRevision when rs's is lower
// (a ReplicaSet reused by a rollback keeps its old numbers in
// RevisionHistoryAnnotation), and for a ReplicaSet about to be created the
// replica annotations. It reports whether anything changed.
func setNewRSAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision int64, exists bool) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if skipCopy[k] || rs.Annotations[k] == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	oldText, had := rs.Annotations[RevisionAnnotation]
	old := revision(rs.Annotations)
	if old < newRevision {
		rs.Annotations[RevisionAnnotation] = strconv.FormatInt(newRevision, 10)
		changed = true
		if had {
			if h := rs.Annotations[RevisionHistoryAnnotation]; h == "" {
				rs.Annotations[RevisionHistoryAnnotation] = oldText
			} else {
				rs.Annotations[RevisionHistoryAnnotation] = h + "," + oldText
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d)) {
		changed = true
	}
	return changed
}

// setReplicasAnnotations records desired and max replicas on rs (the
// caller's copy) and reports whether they changed.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]string{
		DesiredReplicasAnnotation: strconv.Itoa(int(desired)),
		MaxReplicasAnnotation:     strconv.Itoa(int(maxReplicas)),
	} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

// replicasAnnotationsNeedUpdate tells whether setReplicasAnnotations would
// change rs.
func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

// intAnnotation parses an integer annotation of rs.
func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// equalIgnoreHash compares two pod templates, ignoring the
// pod-template-hash label (a Deployment's template has none, its
// ReplicaSets' have one). Neither argument is modified.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	if !labelsEqualIgnoreHash(a.Labels, b.Labels) {
		return false
	}
	a2, b2 := *a, *b
	a2.Labels, b2.Labels = nil, nil
	return equality.Semantic.DeepEqual(&a2, &b2)
}

func labelsEqualIgnoreHash(a, b map[string]string) bool {
	n := 0
	for k, v := range a {
		if k == appsv1.DefaultDeploymentUniqueLabelKey {
			continue
		}
		n++
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	for k := range b {
		if k != appsv1.DefaultDeploymentUniqueLabelKey {
			n--
		}
	}
	return n == 0
}
