package daemonset

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// Labels the controller puts on every daemon pod.
const (
	// templateGenerationLabel carries the DaemonSet's template generation
	// (the deprecated.daemonset.template.generation annotation).
	templateGenerationLabel = "pod-template-generation"
	// hashLabel carries the hash of the current ControllerRevision.
	hashLabel = appsv1.DefaultDaemonSetUniqueLabelKey
)

// podsShouldBeOnNode decides for one node: a node that should run the
// daemon and has no pod needs one; on a node where daemon pods may stay,
// failed pods are deleted (paced by a back-off), succeeded ones too, and
// surplus pods beyond the one (or, surging, two) allowed; a node where they
// may not stay loses them all.
func (r *reconciler) podsShouldBeOnNode(node *corev1.Node, byNode map[string][]*corev1.Pod, ds *appsv1.DaemonSet,
	hash string) (need []string, del []*corev1.Pod) {
	shouldRun, shouldStay := nodeShouldRun(node, ds)
	pods, exists := byNode[node.Name]
	switch {
	case shouldRun && !exists:
		return []string{node.Name}, nil
	case shouldStay:
		var running []*corev1.Pod
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			switch p.Status.Phase {
			case corev1.PodFailed:
				if r.failedPodDue(ds, node.Name, p) {
					del = append(del, p)
				}
			case corev1.PodSucceeded:
				r.recorder.Eventf(ds, corev1.EventTypeNormal, ReasonSucceededDaemonPod,
					"Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name)
				del = append(del, p)
			default:
				running = append(running, p)
			}
		}
		return nil, append(del, r.surplus(ds, running, hash)...)
	case exists:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p)
			}
		}
	}
	return nil, del
}

// failedPodDue reports whether the failed pod p on node may be deleted now.
// Deletions on one node are paced by an exponential back-off (the kubelet
// may keep rejecting the pod); while it runs, the DaemonSet is queued again
// for its end.
func (r *reconciler) failedPodDue(ds *appsv1.DaemonSet, node string, p *corev1.Pod) bool {
	key := string(ds.UID) + "/" + node
	now := r.clock.Now()
	if wait, delay := r.backoff.inBackoff(key, now); wait {
		r.later.after(request(ds.Namespace, ds.Name), delay)
		return false
	}
	r.backoff.next(key, now)
	r.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedDaemonPod,
		"Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node)
	return true
}

// surplus returns the running pods of one node to delete. Without surge
// all but the oldest go. With surge, one new pod (of hash) and one old pod
// may coexist; the old one goes once it is not ready or the new one is
// available; any other pod goes.
func (r *reconciler) surplus(ds *appsv1.DaemonSet, running []*corev1.Pod, hash string) []*corev1.Pod {
	if len(running) <= 1 {
		return nil
	}
	sortByAge(running)
	if !allowsSurge(ds) {
		return running[1:]
	}
	var del []*corev1.Pod
	var oldestNew, oldestOld *corev1.Pod
	for _, p := range running {
		switch {
		case p.Labels[hashLabel] == hash && oldestNew == nil:
			oldestNew = p
		case p.Labels[hashLabel] != hash && oldestOld == nil:
			oldestOld = p
		default:
			del = append(del, p)
		}
	}
	if oldestNew != nil && oldestOld != nil {
		switch {
		case !podutil.IsPodReady(oldestOld):
			del = append(del, oldestOld)
		case podutil.IsPodAvailable(oldestNew, ds.Spec.MinReadySeconds, metav1.NewTime(r.clock.Now())):
			del = append(del, oldestOld)
		}
	}
	return del
}

// syncNodes deletes del and creates one pod on each node of need, each at
// most burst per sync, after recording the expectations. Creates run in
// slow-start batches 1, 2, 4, ... and stop at the first batch with an
// error; deletes run in parallel.
func (r *reconciler) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del []*corev1.Pod, need []string, hash string) error {
	key := keyOf(ds)
	need = need[:min(len(need), r.burst)]
	del = del[:min(len(del), r.burst)]
	keys := make([]string, len(del))
	for i, p := range del {
		keys[i] = podKey(p)
	}
	r.exp.ExpectDeletions(key, keys)
	r.exp.RaiseExpectations(key, len(need), 0)

	template := podTemplate(ds, hash)
	var errs []error
	var mu sync.Mutex
	for pos, batch := 0, min(len(need), 1); pos < len(need); pos, batch = pos+batch, min(2*batch, len(need)-pos-batch) {
		failed := 0
		var wg sync.WaitGroup
		for _, node := range need[pos : pos+batch] {
			wg.Go(func() {
				if err := r.createPod(ctx, ds, template, node); err != nil {
					r.exp.CreationObserved(key)
					mu.Lock()
					errs = append(errs, err)
					failed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if skipped := len(need) - pos - batch; failed > 0 && skipped > 0 {
			// Creates never attempted will never be observed.
			r.exp.LowerExpectations(key, skipped, 0)
			break
		}
	}
	var wg sync.WaitGroup
	for _, p := range del {
		wg.Go(func() {
			if err := r.deletePod(ctx, ds, p); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createPod creates the daemon pod for node from template.
func (r *reconciler) createPod(ctx context.Context, ds *appsv1.DaemonSet, template *corev1.PodTemplateSpec, node string) error {
	t := template.DeepCopy()
	t.Spec.Affinity = nodeNameAffinity(t.Spec.Affinity, node)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    ds.Name + "-",
			Namespace:       ds.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, dsGVK)},
		},
		Spec: t.Spec,
	}
	release, err := r.acquireWrite(ctx)
	if err != nil {
		return fmt.Errorf("create pod for daemonset %s on node %s: %w", keyOf(ds), node, err)
	}
	created, err := r.pods.Namespace(ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	release()
	if err == nil {
		r.recorder.Eventf(ds, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %s", created.Name)
		return nil
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace is going away; nothing to retry.
		return nil
	}
	r.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
	return fmt.Errorf("create pod for daemonset %s on node %s: %w", keyOf(ds), node, err)
}

// deletePod deletes p. A pod already gone is not an error; a failed delete
// lowers the expectation at once.
func (r *reconciler) deletePod(ctx context.Context, ds *appsv1.DaemonSet, p *corev1.Pod) error {
	release, err := r.acquireWrite(ctx)
	if err == nil {
		err = r.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		release()
	}
	if err == nil {
		r.recorder.Eventf(ds, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %s", p.Name)
		return nil
	}
	r.exp.DeletionObserved(keyOf(ds), podKey(p))
	if apierrors.IsNotFound(err) {
		return nil
	}
	r.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
	return fmt.Errorf("delete pod %s: %w", podKey(p), err)
}

// podTemplate returns ds's template with the daemon tolerations and the
// pod-template-generation and controller-revision-hash labels.
func podTemplate(ds *appsv1.DaemonSet, hash string) *corev1.PodTemplateSpec {
	t := ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if gen, ok := templateGeneration(ds); ok {
		t.Labels[templateGenerationLabel] = strconv.FormatInt(gen, 10)
	}
	if hash != "" {
		t.Labels[hashLabel] = hash
	}
	return t
}

// templateGeneration reads the deprecated.daemonset.template.generation
// annotation the API server keeps; false when absent or unreadable.
func templateGeneration(ds *appsv1.DaemonSet) (int64, bool) {
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// isPodUpdated reports whether pod runs ds's current template: its
// controller-revision-hash is hash, or its pod-template-generation is the
// DaemonSet's template generation.
func isPodUpdated(ds *appsv1.DaemonSet, pod *corev1.Pod, hash string) bool {
	if hash != "" && pod.Labels[hashLabel] == hash {
		return true
	}
	gen, ok := templateGeneration(ds)
	return ok && pod.Labels[templateGenerationLabel] == strconv.FormatInt(gen, 10)
}
