package replicaset

import (
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
	"github.com/setpoint-dev/setpoint/workqueue"
)

// podSource feeds pod events through podHandler, which records
// observations (expectations) before it enqueues the owner.
func podSource(r *reconciler) controller.Source {
	return controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] {
		return &podHandler{r: r, q: q}
	})
}

// podHandler maps pod events to ReplicaSets and records observations.
type podHandler struct {
	r *reconciler
	q handler.Queue
}

func (h *podHandler) enqueue(rs *appsv1.ReplicaSet, low bool) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rs.Namespace, Name: rs.Name}}
	if low {
		h.q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, req)
		return
	}
	h.q.Add(req)
}

// OnAdd implements informer.Handler.
func (h *podHandler) OnAdd(pod *corev1.Pod, initial bool) {
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already terminating (e.g. after a
		// restart): not a creation we are waiting for.
		h.OnDelete(pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		rs := h.r.resolve(pod.Namespace, ref)
		if rs == nil {
			return
		}
		h.r.exp.CreationObserved(keyOf(rs))
		h.enqueue(rs, initial)
		return
	}
	for _, rs := range h.r.matchingReplicaSets(pod) {
		h.enqueue(rs, initial)
	}
}

// OnUpdate implements informer.Handler.
func (h *podHandler) OnUpdate(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return // resync: nothing changed
	}
	labelsChanged := !equality.Semantic.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		h.OnDelete(cur, false)
		if labelsChanged {
			h.OnDelete(old, false)
		}
		return
	}
	oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
	refChanged := !equality.Semantic.DeepEqual(oldRef, curRef)
	if refChanged && oldRef != nil {
		if rs := h.r.resolve(old.Namespace, oldRef); rs != nil {
			h.enqueue(rs, false)
		}
	}
	if curRef != nil {
		if rs := h.r.resolve(cur.Namespace, curRef); rs != nil {
			h.enqueue(rs, false)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range h.r.matchingReplicaSets(cur) {
			h.enqueue(rs, false)
		}
	}
}

// OnDelete implements informer.Handler; also called for pods that got a
// deletionTimestamp.
func (h *podHandler) OnDelete(pod *corev1.Pod, _ bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return
	}
	rs := h.r.resolve(pod.Namespace, ref)
	if rs == nil {
		return
	}
	h.r.exp.DeletionObserved(keyOf(rs), podKey(pod))
	h.enqueue(rs, false)
}

// resolve returns the cached ReplicaSet ref points to, or nil when ref is
// not a ReplicaSet or names one that no longer exists (other UID).
func (r *reconciler) resolve(ns string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.Kind != r.gvk.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != r.gvk.Group {
		return nil
	}
	rs, err := r.owner.Get(ns, ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	return rs
}

// matchingReplicaSets returns the cached ReplicaSets of pod's namespace
// whose (non-empty) selector matches the pod: the candidates to adopt it.
func (r *reconciler) matchingReplicaSets(pod *corev1.Pod) []*appsv1.ReplicaSet {
	all, err := r.owner.List(pod.Namespace)
	if err != nil {
		return nil
	}
	var out []*appsv1.ReplicaSet
	set := labels.Set(pod.Labels)
	for _, rs := range all {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(set) {
			continue
		}
		out = append(out, rs)
	}
	return out
}

func keyOf(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
