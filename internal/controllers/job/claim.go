package job

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
)

// podsForJob returns the pods the Job controls after adopting matching
// orphans (which also get the tracking finalizer) and releasing pods that
// stopped matching. All phases are returned: finished pods are counted.
func (r *reconciler) podsForJob(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("invalid selector: %w", err)
	}
	candidates, err := controllerref.Candidates(r.podInf.Indexer(), job)
	if err != nil {
		return nil, fmt.Errorf("pods from cache: %w", err)
	}
	claimer := controllerref.New(job, jobGVK, selector, r.adoptWithFinalizer,
		controllerref.RecheckDeletionTimestamp(job, func(ctx context.Context) (metav1.Object, error) {
			return r.jobs.Namespace(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		}))
	pods, err := claimer.Claim(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("claim pods: %w", err)
	}
	for i, p := range pods {
		if !ownedBy(p, job.UID) && !hasTrackingFinalizer(p) {
			// Adopted just now: the patch added the finalizer.
			cp := p.DeepCopy()
			cp.Finalizers = append(cp.Finalizers, batchv1.JobTrackingFinalizer)
			pods[i] = cp
		}
	}
	return pods, nil
}

// adoptWithFinalizer sends controllerref's patch, adding the tracking
// finalizer when the patch adopts (sets an ownerReference) rather than
// releases.
func (r *reconciler) adoptWithFinalizer(ctx context.Context, pod *corev1.Pod, data []byte) error {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("adoption patch: %w", err)
	}
	if meta, ok := doc["metadata"].(map[string]any); ok && isAdoption(meta) {
		meta["finalizers"] = []string{batchv1.JobTrackingFinalizer}
		var err error
		if data, err = json.Marshal(doc); err != nil {
			return fmt.Errorf("adoption patch: %w", err)
		}
	}
	_, err := r.pods.Namespace(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	return err
}

// isAdoption reports whether a controllerref patch's metadata adds an
// ownerReference (a release carries a "$patch": "delete" directive).
func isAdoption(meta map[string]any) bool {
	refs, ok := meta["ownerReferences"].([]any)
	if !ok || len(refs) == 0 {
		return false
	}
	for _, ref := range refs {
		if m, ok := ref.(map[string]any); ok {
			if _, del := m["$patch"]; del {
				return false
			}
		}
	}
	return true
}

// ownedBy reports whether p lists uid among its owners in the cache.
func ownedBy(p *corev1.Pod, uid types.UID) bool {
	for _, ref := range p.OwnerReferences {
		if ref.UID == uid {
			return true
		}
	}
	return false
}
