package job

import (
	"slices"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// finalizerExpectations remembers, per Job key, the pods whose tracking
// finalizer the controller removed and the informer has not yet shown
// without it: such a pod is never counted twice.
type finalizerExpectations struct {
	mu   sync.Mutex
	uids map[string]sets.Set[string]
}

func newFinalizerExpectations() *finalizerExpectations {
	return &finalizerExpectations{uids: map[string]sets.Set[string]{}}
}

// expect records uids as removals in flight for key.
func (f *finalizerExpectations) expect(key string, uids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.uids[key]
	if !ok {
		s = sets.New[string]()
		f.uids[key] = s
	}
	s.Insert(uids...)
}

// observed forgets uid for key.
func (f *finalizerExpectations) observed(key, uid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.uids[key]; ok {
		s.Delete(uid)
		if s.Len() == 0 {
			delete(f.uids, key)
		}
	}
}

// expected returns a copy of key's UIDs.
func (f *finalizerExpectations) expected(key string) sets.Set[string] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.uids[key].Clone()
}

func (f *finalizerExpectations) forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.uids, key)
}

// podSource feeds pod events through podHandler, which records
// observations (expectations) before it enqueues the owner.
func podSource(r *reconciler) controller.Source {
	return controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] {
		return &podHandler{r: r, q: q}
	})
}

type podHandler struct {
	r *reconciler
	q handler.Queue
}

func (h *podHandler) enqueue(job *batchv1.Job) {
	h.q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: job.Namespace, Name: job.Name}})
}

// OnAdd implements informer.Handler.
func (h *podHandler) OnAdd(pod *corev1.Pod, _ bool) {
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already terminating (e.g. after a
		// restart): not a creation we are waiting for.
		h.terminating(pod)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if job := h.r.resolve(pod.Namespace, ref); job != nil {
			h.r.exp.CreationObserved(keyOf(job))
			h.enqueue(job)
		}
		return
	}
	for _, job := range h.r.matchingJobs(pod) {
		h.enqueue(job)
	}
}

// OnUpdate implements informer.Handler.
func (h *podHandler) OnUpdate(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef := metav1.GetControllerOfNoCopy(cur)
	if curRef != nil && hasTrackingFinalizer(old) && !hasTrackingFinalizer(cur) {
		h.r.finalizers.observed(pod2JobKey(cur, curRef), string(cur.UID))
	}
	if cur.DeletionTimestamp != nil && old.DeletionTimestamp == nil && curRef != nil {
		h.r.exp.DeletionObserved(pod2JobKey(cur, curRef), podKey(cur))
	}
	oldRef := metav1.GetControllerOfNoCopy(old)
	if oldRef != nil && !equality.Semantic.DeepEqual(oldRef, curRef) {
		if job := h.r.resolve(old.Namespace, oldRef); job != nil {
			h.enqueue(job)
		}
	}
	if curRef != nil {
		if job := h.r.resolve(cur.Namespace, curRef); job != nil {
			h.enqueue(job)
		}
		return
	}
	if !equality.Semantic.DeepEqual(old.Labels, cur.Labels) || oldRef != nil {
		for _, job := range h.r.matchingJobs(cur) {
			h.enqueue(job)
		}
	}
}

// OnDelete implements informer.Handler.
func (h *podHandler) OnDelete(pod *corev1.Pod, _ bool) {
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		h.r.finalizers.observed(pod2JobKey(pod, ref), string(pod.UID))
	}
	h.terminating(pod)
}

// terminating records the deletion of pod and enqueues its Job.
func (h *podHandler) terminating(pod *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	h.r.exp.DeletionObserved(pod2JobKey(pod, ref), podKey(pod))
	if job := h.r.resolve(pod.Namespace, ref); job != nil {
		h.enqueue(job)
	}
}

// resolve returns the cached Job ref points to, or nil.
func (r *reconciler) resolve(ns string, ref *metav1.OwnerReference) *batchv1.Job {
	if !isJobRef(ref) {
		return nil
	}
	job, err := r.jobInf.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || job.UID != ref.UID {
		return nil
	}
	return job
}

func isJobRef(ref *metav1.OwnerReference) bool {
	if ref.Kind != jobGVK.Kind {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == jobGVK.Group
}

// matchingJobs returns the cached Jobs of pod's namespace whose selector
// matches it: candidates to adopt it.
func (r *reconciler) matchingJobs(pod *corev1.Pod) []*batchv1.Job {
	all, err := r.jobInf.Lister().Namespace(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*batchv1.Job
	for _, job := range all {
		sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, job)
	}
	return out
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func pod2JobKey(p *corev1.Pod, ref *metav1.OwnerReference) string {
	return p.Namespace + "/" + ref.Name
}

func keyOf(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
