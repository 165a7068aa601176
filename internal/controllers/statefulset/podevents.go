package statefulset

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// newPodSource feeds pod events: they satisfy expectations first, then
// enqueue the owning set (or, for orphans, the sets that may adopt them).
func newPodSource(r *reconciler) controller.Source {
	return controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] {
		return &podHandler{r: r, q: q}
	})
}

// newClaimSource feeds PVC events: they satisfy claim-create expectations
// and enqueue the set that waited for them.
func newClaimSource(r *reconciler) controller.Source {
	return controller.Informer(r.pvcInf, "v1 persistentvolumeclaims", func(q handler.Queue) informer.Handler[*corev1.PersistentVolumeClaim] {
		return &claimHandler{r: r, q: q}
	})
}

type claimHandler struct {
	r *reconciler
	q handler.Queue
}

func (h *claimHandler) observe(c *corev1.PersistentVolumeClaim, present bool) {
	key := claimObjKey(c.Namespace, c.Name)
	if setKey := h.r.exp.observed(key, present, c.UID, c.DeletionTimestamp != nil); setKey != "" {
		if i := strings.IndexByte(setKey, '/'); i >= 0 {
			h.q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: setKey[:i], Name: setKey[i+1:]}})
		}
	}
	// Claims carry their set's matchLabels: a set waiting for a claim
	// (a stale one to go, an owner to change) hears of it.
	for _, set := range h.r.setsMatching(c.Namespace, c.Labels) {
		h.q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: set.Namespace, Name: set.Name}})
	}
}

// OnAdd implements informer.Handler.
func (h *claimHandler) OnAdd(c *corev1.PersistentVolumeClaim, _ bool) { h.observe(c, true) }

// OnUpdate implements informer.Handler.
func (h *claimHandler) OnUpdate(_, c *corev1.PersistentVolumeClaim) { h.observe(c, true) }

// OnDelete implements informer.Handler.
func (h *claimHandler) OnDelete(c *corev1.PersistentVolumeClaim, _ bool) { h.observe(c, false) }

// podHandler maps pod events to sets and records observations.
type podHandler struct {
	r *reconciler
	q handler.Queue
}

func (h *podHandler) enqueue(set *appsv1.StatefulSet) {
	h.q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: set.Namespace, Name: set.Name}})
}

func (h *podHandler) observe(pod *corev1.Pod, present bool) {
	h.r.exp.observed(podObjKey(pod.Namespace, pod.Name), present, pod.UID, pod.DeletionTimestamp != nil)
}

// OnAdd implements informer.Handler.
func (h *podHandler) OnAdd(pod *corev1.Pod, _ bool) {
	h.observe(pod, true)
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := h.r.resolve(pod.Namespace, ref); set != nil {
			h.enqueue(set)
		}
		return
	}
	for _, set := range h.r.setsForOrphan(pod) {
		h.enqueue(set)
	}
}

// OnUpdate implements informer.Handler.
func (h *podHandler) OnUpdate(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	h.observe(cur, true)
	oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
	refChanged := !equality.Semantic.DeepEqual(oldRef, curRef)
	if refChanged && oldRef != nil {
		if set := h.r.resolve(old.Namespace, oldRef); set != nil {
			h.enqueue(set)
		}
	}
	if curRef != nil {
		if set := h.r.resolve(cur.Namespace, curRef); set != nil {
			h.enqueue(set)
		}
		return
	}
	if refChanged || !equality.Semantic.DeepEqual(old.Labels, cur.Labels) {
		for _, set := range h.r.setsForOrphan(cur) {
			h.enqueue(set)
		}
	}
}

// OnDelete implements informer.Handler.
func (h *podHandler) OnDelete(pod *corev1.Pod, _ bool) {
	h.observe(pod, false)
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if set := h.r.resolve(pod.Namespace, ref); set != nil {
			h.enqueue(set)
		}
	}
}

// resolve returns the cached set ref points to, or nil when ref is not a
// StatefulSet or names one that no longer exists (other UID).
func (r *reconciler) resolve(ns string, ref *metav1.OwnerReference) *appsv1.StatefulSet {
	if ref.Kind != setGVK.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != setGVK.Group {
		return nil
	}
	set, err := r.setInf.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || set.UID != ref.UID {
		return nil
	}
	return set
}

// setsForOrphan returns the cached sets of pod's namespace whose selector
// matches it: the candidates to adopt it.
func (r *reconciler) setsForOrphan(pod *corev1.Pod) []*appsv1.StatefulSet {
	return r.setsMatching(pod.Namespace, pod.Labels)
}

// setsMatching returns the cached sets of namespace ns whose (non-empty)
// selector matches l.
func (r *reconciler) setsMatching(ns string, l map[string]string) []*appsv1.StatefulSet {
	all, err := r.setInf.Lister().Namespace(ns).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.StatefulSet
	for _, set := range all {
		sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(l)) {
			out = append(out, set)
		}
	}
	return out
}

// ownerRequest maps an object to its controlling StatefulSet.
func ownerRequest[T metav1.Object](obj T) []reconcile.Request {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != setGVK.Kind {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
}

func keyOf(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }
