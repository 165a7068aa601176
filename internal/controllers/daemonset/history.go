package daemonset

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/history"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// defaultRevisionHistoryLimit is spec.revisionHistoryLimit's default.
const defaultRevisionHistoryLimit = 10

// constructHistory returns the revision of ds's current template (creating
// it, or renumbering it as the newest when the template went back to an
// older one) and the other revisions ds controls. Revisions missing the
// controller-revision-hash label get their name as hash; several revisions
// of the current template are merged into the newest.
func (r *reconciler) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	revs, err := r.controlledRevisions(ctx, ds)
	if err != nil {
		return nil, nil, err
	}
	patch, err := revisionPatch(ds)
	if err != nil {
		return nil, nil, err
	}
	var current []*appsv1.ControllerRevision
	for _, rev := range revs {
		if _, ok := rev.Labels[hashLabel]; !ok {
			cp := rev.DeepCopy()
			if cp.Labels == nil {
				cp.Labels = map[string]string{}
			}
			cp.Labels[hashLabel] = cp.Name
			if rev, err = r.crs.Namespace(ds.Namespace).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
				return nil, nil, fmt.Errorf("label revision %s: %w", cp.Name, err)
			}
		}
		if bytes.Equal(patch, rev.Data.Raw) {
			current = append(current, rev)
		} else {
			old = append(old, rev)
		}
	}
	next := maxRevision(old) + 1
	if len(current) == 0 {
		cur, err = r.snapshot(ctx, ds, next, patch)
		return cur, old, err
	}
	if cur, err = r.dedupRevisions(ctx, ds, current); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		if cur, err = r.history.SetRevision(ctx, cur, next); err != nil {
			return nil, nil, err
		}
	}
	return cur, old, nil
}

// controlledRevisions returns the revisions ds controls after adopting the
// orphans of its namespace that match its selector.
func (r *reconciler) controlledRevisions(ctx context.Context, ds *appsv1.DaemonSet) ([]*appsv1.ControllerRevision, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("invalid selector: %w", err)
	}
	revs, err := r.history.List(ds, sel)
	if err != nil {
		return nil, err
	}
	canAdopt := controllerref.RecheckDeletionTimestamp(ds, func(ctx context.Context) (metav1.Object, error) {
		return r.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	})
	checked := false
	out := revs[:0:0]
	for _, rev := range revs {
		if metav1.GetControllerOfNoCopy(rev) != nil {
			out = append(out, rev)
			continue
		}
		if rev.DeletionTimestamp != nil {
			continue
		}
		if !checked {
			if err := canAdopt(ctx); err != nil {
				return nil, fmt.Errorf("adopt revisions: %w", err)
			}
			checked = true
		}
		adopted, err := r.history.Adopt(ctx, ds, dsGVK, rev)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, adopted)
	}
	return out, nil
}

// revisionPatch returns what a DaemonSet revision stores (and what
// `kubectl rollout undo` applies): a strategic merge patch replacing
// spec.template with ds's, {"spec":{"template":{...,"$patch":"replace"}}}.
func revisionPatch(ds *appsv1.DaemonSet) ([]byte, error) {
	b, err := json.Marshal(ds)
	if err != nil {
		return nil, fmt.Errorf("encode daemonset %s: %w", keyOf(ds), err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("decode daemonset %s: %w", keyOf(ds), err)
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		template = map[string]any{}
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// snapshot creates revision number n of ds's template, named
// "<ds>-<hash>" with the pod-template hash (and collision count). A name
// taken by another template raises status.collisionCount and fails the
// sync, which retries under the next name.
func (r *reconciler) snapshot(ctx context.Context, ds *appsv1.DaemonSet, n int64, patch []byte) (*appsv1.ControllerRevision, error) {
	hash := podutil.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	lbls := make(map[string]string, len(ds.Spec.Template.Labels)+1)
	for k, v := range ds.Spec.Template.Labels {
		lbls[k] = v
	}
	lbls[hashLabel] = hash
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: lbls, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, dsGVK)},
		},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: n,
	}
	c := r.crs.Namespace(ds.Namespace)
	created, err := c.Create(ctx, rev, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create revision %s: %w", rev.Name, err)
	}
	existing, gerr := c.Get(ctx, rev.Name, metav1.GetOptions{})
	if gerr != nil {
		return nil, fmt.Errorf("get revision %s: %w", rev.Name, gerr)
	}
	if bytes.Equal(existing.Data.Raw, patch) {
		return existing, nil
	}
	fresh, gerr := r.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if gerr != nil {
		return nil, fmt.Errorf("get daemonset %s: %w", keyOf(ds), gerr)
	}
	if !reflect.DeepEqual(fresh.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count (%v, expected %v) of DaemonSet %q while processing; will retry until it is updated",
			ptrValue(ds.Status.CollisionCount), ptrValue(fresh.Status.CollisionCount), ds.Name)
	}
	count := ptrValue(fresh.Status.CollisionCount) + 1
	fresh.Status.CollisionCount = &count
	if _, uerr := r.dss.Namespace(ds.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); uerr != nil {
		return nil, fmt.Errorf("raise collisionCount of daemonset %s: %w", keyOf(ds), uerr)
	}
	r.log.Info("hash collision: raised collisionCount", "daemonset", keyOf(ds), "collisionCount", count)
	return nil, fmt.Errorf("create revision %s: %w", rev.Name, err)
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// dedupRevisions keeps the newest of several revisions of the same
// template: the pods labelled with the others' hashes are relabelled, and
// the others deleted.
func (r *reconciler) dedupRevisions(ctx context.Context, ds *appsv1.DaemonSet, current []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(current) == 1 {
		return current[0], nil
	}
	keep := current[0]
	for _, rev := range current {
		if rev.Revision >= keep.Revision {
			keep = rev
		}
	}
	pods, err := r.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	want := keep.Labels[hashLabel]
	for _, p := range pods {
		if p.Labels[hashLabel] == want {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{hashLabel: want}}})
		if err != nil {
			return nil, err
		}
		if _, err := r.pods.Namespace(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("relabel pod %s: %w", podKey(p), err)
		}
	}
	for _, rev := range current {
		if rev.Name == keep.Name {
			continue
		}
		if err := r.history.Delete(ctx, rev); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// cleanupHistory deletes the oldest old revisions that no pod runs until
// at most revisionHistoryLimit old revisions remain (live ones count but
// are kept).
func (r *reconciler) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision,
	byNode map[string][]*corev1.Pod) error {
	limit := int32(defaultRevisionHistoryLimit)
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = *ds.Spec.RevisionHistoryLimit
	}
	toKill := len(old) - int(limit)
	if toKill <= 0 {
		return nil
	}
	live := map[string]bool{}
	for _, pods := range byNode {
		for _, p := range pods {
			if h := p.Labels[hashLabel]; h != "" {
				live[h] = true
			}
		}
	}
	sorted := append([]*appsv1.ControllerRevision(nil), old...)
	history.Sort(sorted)
	for _, rev := range sorted {
		if toKill <= 0 {
			break
		}
		if live[rev.Labels[hashLabel]] {
			continue
		}
		if err := r.history.Delete(ctx, rev); err != nil {
			return err
		}
		toKill--
	}
	return nil
}

func maxRevision(revs []*appsv1.ControllerRevision) int64 {
	var m int64
	for _, rev := range revs {
		m = max(m, rev.Revision)
	}
	return m
}
