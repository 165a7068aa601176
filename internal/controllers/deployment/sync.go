package deployment

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncStatusOnly recomputes the status of a Deployment being deleted.
func (s *syncer) syncStatusOnly(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := s.allReplicaSets(ctx, rsList, false)
	if err != nil {
		return err
	}
	return s.syncStatusIfChanged(ctx, calculateStatus(append(oldRSs, newRS), newRS, s.d, s.now))
}

// sync handles a scaling event or a paused Deployment: resize the
// ReplicaSets (proportionally in the middle of a rolling update), clean up
// history when paused, and recompute the status. No rollout progress.
func (s *syncer) sync(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := s.allReplicaSets(ctx, rsList, false)
	if err != nil {
		return err
	}
	if err := s.scale(ctx, newRS, oldRSs); err != nil {
		return err
	}
	if s.d.Spec.Paused {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncStatusIfChanged(ctx, calculateStatus(append(oldRSs, newRS), newRS, s.d, s.now))
}

// allReplicaSets splits rsList into the new ReplicaSet (brought up to date,
// or created when create is set and there is none) and the old ones.
// newRS is nil when there is none and create is false.
func (s *syncer) allReplicaSets(ctx context.Context, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	existing, oldRSs := splitReplicaSets(s.d, rsList)
	newRS, err := s.newReplicaSet(ctx, existing, oldRSs, create)
	if err != nil {
		return nil, nil, err
	}
	return newRS, oldRSs, nil
}

// newReplicaSet returns the Deployment's new ReplicaSet. An existing one
// gets the revision max(old)+1 when its own is lower (a rollback makes an
// old ReplicaSet new again), the Deployment's annotations and
// minReadySeconds; the Deployment gets its revision annotation and, if it
// has none, a FoundNewReplicaSet condition. Otherwise, with create, it
// creates <name>-<hash> sized by newRSNewReplicas; a name taken by a
// ReplicaSet that is not ours bumps status.collisionCount and fails, so the
// next sync tries the next hash.
func (s *syncer) newReplicaSet(ctx context.Context, existing *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	d := s.d
	newRevision := maxRevision(oldRSs) + 1
	if existing != nil {
		rs := existing.DeepCopy()
		changed := setNewRSAnnotations(d, rs, newRevision, true)
		if changed || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			out, err := s.r.rss.Namespace(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
			if err != nil {
				return nil, fmt.Errorf("deployment %s: update new replica set %s: %w", s.req, rs.Name, err)
			}
			return out, nil
		}
		needsUpdate := setDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
		if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonFoundNewRS,
				fmt.Sprintf("Found new replica set %q", rs.Name), s.now))
			needsUpdate = true
		}
		if needsUpdate {
			if err := s.updateStatus(ctx); err != nil {
				return nil, err
			}
		}
		return rs, nil
	}
	if !create {
		return nil, nil
	}
	return s.createNewReplicaSet(ctx, oldRSs, newRevision)
}

// newReplicaSetObject builds the new ReplicaSet of d for hash.
func newReplicaSetObject(d *appsv1.Deployment, hash string) *appsv1.ReplicaSet {
	tmpl := *d.Spec.Template.DeepCopy()
	tmpl.Labels = cloneWith(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = cloneWith(sel.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, deployGVK)},
			Labels:          tmpl.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        new(int32),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        sel,
			Template:        tmpl,
		},
	}
}

func (s *syncer) createNewReplicaSet(ctx context.Context, oldRSs []*appsv1.ReplicaSet, newRevision int64) (*appsv1.ReplicaSet, error) {
	d := s.d
	hash := podutil.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	rs := newReplicaSetObject(d, hash)
	n := newRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), oldRSs...), rs), rs)
	*rs.Spec.Replicas = n
	setNewRSAnnotations(d, rs, newRevision, false)
	created, err := s.r.rss.Namespace(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	existed := false
	switch {
	case apierrors.IsAlreadyExists(err):
		// Our cache may lag behind our own create; read the server.
		cur, gerr := s.r.rss.Namespace(d.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("deployment %s: read existing replica set %s: %w", s.req, rs.Name, gerr)
		}
		if ref := metav1.GetControllerOfNoCopy(cur); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
			created, err, existed = cur, nil, true
			break
		}
		// A hash collision: try the next name on the next sync.
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		if uerr := s.updateStatus(ctx); uerr != nil {
			return nil, uerr
		}
		return nil, fmt.Errorf("deployment %s: replica set name %s is taken (hash collision, collisionCount now %d)", s.req, rs.Name, *d.Status.CollisionCount)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, fmt.Errorf("deployment %s: create replica set: %w", s.req, err)
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonRSCreateError, msg, s.now))
			_ = s.updateStatus(ctx) // the create error is the one to report
		}
		s.r.recorder.Event(d, corev1.EventTypeWarning, ReasonRSCreateError, msg)
		return nil, fmt.Errorf("deployment %s: create replica set %s: %w", s.req, rs.Name, err)
	}
	if !existed && n > 0 {
		s.r.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	needsUpdate := setDeploymentRevision(d, strconv.FormatInt(newRevision, 10))
	if !existed && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSCreated,
			fmt.Sprintf("Created new replica set %q", created.Name), s.now))
		needsUpdate = true
	}
	if needsUpdate {
		if err := s.updateStatus(ctx); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// setDeploymentRevision sets the Deployment's revision annotation and
// reports whether it changed.
func setDeploymentRevision(d *appsv1.Deployment, rev string) bool {
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[RevisionAnnotation] = rev
	return true
}

func cloneWith(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// scale resizes the ReplicaSets after spec.replicas changed (or while
// paused): a single active ReplicaSet (or the newest, when none is active)
// takes spec.replicas; a saturated new ReplicaSet makes the old ones go to
// 0; otherwise, in a rolling update, the difference to spec.replicas +
// maxSurge is shared among the active ReplicaSets in proportion to their
// sizes, leftovers to the largest.
func (s *syncer) scale(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if one := findActiveOrLatest(newRS, oldRSs); one != nil {
		if rsReplicas(one) == replicas(d) {
			return nil
		}
		_, _, err := s.scaleReplicaSet(ctx, one, replicas(d))
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := s.scaleReplicaSet(ctx, old, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	active := filterActive(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	var allowed int32
	if replicas(d) > 0 {
		allowed = replicas(d) + maxSurge(d)
	}
	toAdd := allowed - specTotal(active)
	switch {
	case toAdd > 0:
		sortBySizeNewer(active)
	case toAdd < 0:
		sortBySizeOlder(active)
	}
	sizes := make([]int32, len(active))
	var added int32
	for i, rs := range active {
		p := proportion(rs, d, toAdd, added)
		sizes[i] = rsReplicas(rs) + p
		added += p
	}
	for i, rs := range active {
		if i == 0 && toAdd != 0 {
			sizes[0] = max(sizes[0]+toAdd-added, 0)
		}
		if _, _, err := s.scaleReplicaSet(ctx, rs, sizes[i]); err != nil {
			return err
		}
	}
	return nil
}

// scaleReplicaSet sets rs's size and replica annotations (a no-op when
// both are right) with an update carrying rs's resourceVersion, so a
// decision made from a stale cache fails with a conflict instead of
// landing — unless a fresh read shows that only the status moved, and
// not to fewer available pods, in which case the update is redone on the
// fresh object. It records ScalingReplicaSet when the size changed.
func (s *syncer) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32) (bool, *appsv1.ReplicaSet, error) {
	d := s.d
	desired, maxRep := replicas(d), replicas(d)+maxSurge(d)
	sizeChange := rsReplicas(rs) != size
	if !sizeChange && !replicasAnnotationsNeedUpdate(rs, desired, maxRep) {
		return false, rs, nil
	}
	from := rsReplicas(rs)
	out, err := s.updateReplicas(ctx, rs, size, desired, maxRep)
	if apierrors.IsConflict(err) {
		// The ReplicaSet controller writes status all the time. If only
		// that moved on, and not in a way that weakens the decision (same
		// spec, no fewer available pods), apply the decision to the fresh
		// object rather than backing off.
		fresh, gerr := s.r.rss.Namespace(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if gerr == nil && fresh.UID == rs.UID && fresh.Generation == rs.Generation &&
			rsReplicas(fresh) == from && fresh.Status.AvailableReplicas >= rs.Status.AvailableReplicas {
			out, err = s.updateReplicas(ctx, fresh, size, desired, maxRep)
		}
	}
	if err != nil {
		return false, nil, fmt.Errorf("deployment %s: scale replica set %s to %d: %w", s.req, rs.Name, size, err)
	}
	if sizeChange {
		dir := "up"
		if size < from {
			dir = "down"
		}
		s.r.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", dir, out.Name, from, size)
	}
	return sizeChange, out, nil
}

// updateReplicas writes size and the replica annotations on a copy of rs,
// conditional on rs's resourceVersion.
func (s *syncer) updateReplicas(ctx context.Context, rs *appsv1.ReplicaSet, size, desired, maxRep int32) (*appsv1.ReplicaSet, error) {
	cp := rs.DeepCopy()
	cp.Spec.Replicas = &size
	setReplicasAnnotations(cp, desired, maxRep)
	return s.r.rss.Namespace(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
}

// cleanup deletes the oldest old ReplicaSets (by revision, then creation)
// beyond revisionHistoryLimit; only ReplicaSets scaled to 0 with no pods
// left, whose status is current, and not already being deleted.
func (s *syncer) cleanup(ctx context.Context, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := len(alive) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	sortByCreation(alive)
	sort.SliceStable(alive, func(i, j int) bool { return revision(alive[i].Annotations) < revision(alive[j].Annotations) })
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		uid, rv := rs.UID, rs.ResourceVersion
		err := s.r.rss.Namespace(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deployment %s: delete old replica set %s: %w", s.req, rs.Name, err)
		}
	}
	return nil
}
