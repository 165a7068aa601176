package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// slowStartInitialBatch is the size of the first batch of creates.
const slowStartInitialBatch = 1

// manageReplicas creates or deletes pods so that len(pods) moves toward
// spec.replicas, by at most r.burst. pods are the active pods the
// ReplicaSet controls.
func (r *reconciler) manageReplicas(ctx context.Context, pods []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	key := keyOf(rs)
	diff := len(pods) - replicasOf(rs)
	switch {
	case diff < 0:
		n := min(-diff, r.burst)
		r.log.Debug("too few replicas", "replicaset", key, "need", -diff, "creating", n)
		// Expect before creating: the informer may show a new pod before
		// Create returns.
		r.exp.ExpectCreations(key, n)
		ok, err := slowStartBatch(n, slowStartInitialBatch, func() error { return r.createPod(ctx, rs) })
		// Creates that failed or never ran will never be observed.
		for range n - ok {
			r.exp.CreationObserved(key)
		}
		return err
	case diff > 0:
		n := min(diff, r.burst)
		r.log.Debug("too many replicas", "replicaset", key, "excess", diff, "deleting", n)
		victims := podsToDelete(pods, n)
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = podKey(p)
		}
		r.exp.ExpectDeletions(key, keys)
		return r.deletePods(ctx, rs, victims)
	}
	return nil
}

// slowStartBatch calls fn count times, in batches of initial, 2*initial,
// 4*initial, ... whose calls run in parallel. It stops after the first
// batch in which a call failed and returns the number of calls that
// succeeded and the errors of that batch.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	done := 0
	for batch := min(count, initial); batch > 0; batch = min(2*batch, count-done) {
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			wg.Go(func() { errs[i] = fn() })
		}
		wg.Wait()
		failed := 0
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		done += batch - failed
		if failed > 0 {
			return done, errors.Join(errs...)
		}
	}
	return done, nil
}

// createPod creates one pod from rs's template, controlled by rs.
func (r *reconciler) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	pod, err := podFromTemplate(rs, r.gvk)
	if err == nil {
		release, werr := r.acquireWrite(ctx)
		if werr != nil {
			return fmt.Errorf("create pod for replicaset %s: %w", keyOf(rs), werr)
		}
		var created *corev1.Pod
		created, err = r.pods.Namespace(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		release()
		if err == nil {
			r.recorder.Eventf(r.owner.EventObject(rs), corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.Name)
			return nil
		}
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace is going away; nothing to retry.
		return nil
	}
	r.recorder.Eventf(r.owner.EventObject(rs), corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
	return fmt.Errorf("create pod for replicaset %s: %w", keyOf(rs), err)
}

// podFromTemplate builds the pod rs creates: its template's labels,
// annotations, finalizers and spec, named "<rs-name>-<random>", with rs as
// its controller.
func podFromTemplate(rs *appsv1.ReplicaSet, gvk schema.GroupVersionKind) (*corev1.Pod, error) {
	t := rs.Spec.Template.DeepCopy()
	if len(t.Labels) == 0 {
		return nil, fmt.Errorf("replicaset %s: the pod template has no labels", keyOf(rs))
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: rs.Name + "-",
			Namespace:    rs.Namespace,
			Labels:       t.Labels,
			Annotations:  t.Annotations,
			Finalizers:   t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(rs, gvk),
			},
		},
		Spec: t.Spec,
	}
	return pod, nil
}

// deletePods deletes victims in parallel. A pod already gone is not an
// error; every failed delete lowers the expectation at once.
func (r *reconciler) deletePods(ctx context.Context, rs *appsv1.ReplicaSet, victims []*corev1.Pod) error {
	key := keyOf(rs)
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, p := range victims {
		wg.Go(func() {
			release, err := r.acquireWrite(ctx)
			if err == nil {
				err = r.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
				release()
			}
			if err == nil {
				r.recorder.Eventf(r.owner.EventObject(rs), corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
				return
			}
			// The informer will not report a deletion that did not
			// happen (or that it already reported).
			r.exp.DeletionObserved(key, podKey(p))
			if apierrors.IsNotFound(err) {
				return
			}
			r.recorder.Eventf(r.owner.EventObject(rs), corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
			errs[i] = fmt.Errorf("delete pod %s: %w", podKey(p), err)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// podsToDelete returns the n pods to delete first: ranked by
// podutil.RankedPods, where a pod's rank is the number of pods of this
// ReplicaSet on its node (doubled-up pods go first).
func podsToDelete(pods []*corev1.Pod, n int) []*corev1.Pod {
	if n >= len(pods) {
		return pods
	}
	perNode := make(map[string]int, len(pods))
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			perNode[p.Spec.NodeName]++
		}
	}
	ranked := podutil.RankedPods{Pods: append([]*corev1.Pod(nil), pods...), Rank: make([]int, len(pods))}
	for i, p := range ranked.Pods {
		if p.Spec.NodeName != "" {
			ranked.Rank[i] = perNode[p.Spec.NodeName]
		}
	}
	sort.Sort(ranked)
	return ranked.Pods[:n]
}
