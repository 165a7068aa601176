package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/setpoint-dev/setpoint/internal/controllers/history"
)

// revisionPatch returns the data of set's revision: the strategic merge
// patch {"spec":{"template":{...,"$patch":"replace"}}} that restores the
// pod template, the template encoded as the API serves it. `kubectl
// rollout undo` applies this patch to the set.
func revisionPatch(set *appsv1.StatefulSet) ([]byte, error) {
	raw, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	tmpl["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
}

// newRevision returns the (unsaved) revision of set numbered revision:
// labels of the template, annotations of the set.
func newRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := revisionPatch(set)
	if err != nil {
		return nil, fmt.Errorf("statefulset %s revision: %w", keyOf(set), err)
	}
	rev := history.NewRevision(set, setGVK, set.Spec.Template.Labels, patch, revision, collisionCount)
	if len(set.Annotations) > 0 {
		rev.Annotations = maps.Clone(set.Annotations)
	}
	return rev, nil
}

// applyRevision returns a copy of set whose spec has rev's template.
func applyRevision(set *appsv1.StatefulSet, rev *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	clone := set.DeepCopy()
	orig, err := json.Marshal(clone)
	if err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", rev.Name, err)
	}
	patched, err := strategicpatch.StrategicMergePatch(orig, rev.Data.Raw, clone)
	if err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", rev.Name, err)
	}
	restored := &appsv1.StatefulSet{}
	if err := json.Unmarshal(patched, restored); err != nil {
		return nil, fmt.Errorf("apply revision %s: %w", rev.Name, err)
	}
	clone.Spec = restored.Spec
	return clone, nil
}

// revisions returns set's current and update revisions and the collision
// count, creating the update revision (or renumbering an equal older one,
// a rollback) when the template changed. revs must be sorted.
func (r *reconciler) revisions(ctx context.Context, set *appsv1.StatefulSet, revs []*appsv1.ControllerRevision) (
	current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = newRevision(set, history.Next(revs), &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	equal := history.FindEqual(revs, update)
	switch {
	case len(equal) > 0 && history.Equal(revs[len(revs)-1], equal[len(equal)-1]):
		update = revs[len(revs)-1]
	case len(equal) > 0:
		update, err = r.history.SetRevision(ctx, equal[len(equal)-1], update.Revision)
	default:
		update, err = r.history.Create(ctx, set, update, &collisionCount)
	}
	if err != nil {
		return nil, nil, collisionCount, err
	}
	for _, rv := range revs {
		if rv.Name == set.Status.CurrentRevision {
			current = rv
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// truncateHistory deletes the oldest revisions that are neither current,
// update, nor any pod's, beyond spec.revisionHistoryLimit.
func (r *reconciler) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, revs []*appsv1.ControllerRevision,
	current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	limit := 10
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	return r.history.Truncate(ctx, revs, live, limit)
}
