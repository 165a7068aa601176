package daemonset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// podHandler maps pod events to DaemonSets. It records observations in the
// expectations before it enqueues, so the sync it triggers sees them.
type podHandler struct {
	r *reconciler
	q handler.Queue
}

func (h *podHandler) enqueue(ds *appsv1.DaemonSet) { h.q.Add(request(ds.Namespace, ds.Name)) }

// OnAdd implements informer.Handler.
func (h *podHandler) OnAdd(pod *corev1.Pod, _ bool) {
	if pod.DeletionTimestamp != nil {
		// Seen first while terminating (e.g. after a restart): not a
		// creation anyone waits for.
		h.OnDelete(pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		ds := h.r.resolve(pod.Namespace, ref)
		if ds == nil {
			return
		}
		h.r.exp.CreationObserved(keyOf(ds))
		h.enqueue(ds)
		return
	}
	for _, ds := range h.r.matchingDaemonSets(pod.Namespace, pod.Labels) {
		h.enqueue(ds)
	}
}

// OnUpdate implements informer.Handler.
func (h *podHandler) OnUpdate(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return // resync: nothing changed
	}
	if cur.DeletionTimestamp != nil {
		h.OnDelete(cur, false)
		return
	}
	oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
	refChanged := !equality.Semantic.DeepEqual(oldRef, curRef)
	if refChanged && oldRef != nil {
		if ds := h.r.resolve(old.Namespace, oldRef); ds != nil {
			h.enqueue(ds)
		}
	}
	if curRef != nil {
		ds := h.r.resolve(cur.Namespace, curRef)
		if ds == nil {
			return
		}
		h.enqueue(ds)
		if ds.Spec.MinReadySeconds > 0 && !podutil.IsPodReady(old) && podutil.IsPodReady(cur) {
			// The pod becomes available minReadySeconds from now; a
			// second more absorbs rounding.
			h.r.later.after(request(ds.Namespace, ds.Name), time.Duration(ds.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if refChanged || !equality.Semantic.DeepEqual(old.Labels, cur.Labels) {
		for _, ds := range h.r.matchingDaemonSets(cur.Namespace, cur.Labels) {
			h.enqueue(ds)
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
	ds := h.r.resolve(pod.Namespace, ref)
	if ds == nil {
		return
	}
	h.r.exp.DeletionObserved(keyOf(ds), podKey(pod))
	h.enqueue(ds)
}

// nodeHandler enqueues the DaemonSets a node event concerns: those that
// want the new node, and those whose verdict on a changed node changed.
type nodeHandler struct {
	r *reconciler
	q handler.Queue
}

// OnAdd implements informer.Handler.
func (h *nodeHandler) OnAdd(node *corev1.Node, _ bool) {
	for _, ds := range h.r.allDaemonSets() {
		if run, _ := nodeShouldRun(node, ds); run {
			h.q.Add(request(ds.Namespace, ds.Name))
		}
	}
}

// OnUpdate implements informer.Handler. Only label and taint changes can
// change a verdict (Kubernetes ignores the other updates too).
func (h *nodeHandler) OnUpdate(old, cur *corev1.Node) {
	if old == cur || sameForDaemons(old, cur) {
		return
	}
	for _, ds := range h.r.allDaemonSets() {
		oldRun, oldStay := nodeShouldRun(old, ds)
		curRun, curStay := nodeShouldRun(cur, ds)
		if oldRun != curRun || oldStay != curStay {
			h.q.Add(request(ds.Namespace, ds.Name))
		}
	}
}

// OnDelete implements informer.Handler: the DaemonSets that wanted the node
// have one node fewer to count.
func (h *nodeHandler) OnDelete(node *corev1.Node, _ bool) {
	for _, ds := range h.r.allDaemonSets() {
		if run, stay := nodeShouldRun(node, ds); run || stay {
			h.q.Add(request(ds.Namespace, ds.Name))
		}
	}
}

// sameForDaemons reports whether two states of a node have the same
// labels and taints, all that nodeShouldRun reads besides the name: status
// changes (heartbeats, conditions) wake no DaemonSet.
func sameForDaemons(old, cur *corev1.Node) bool {
	return equality.Semantic.DeepEqual(old.Labels, cur.Labels) &&
		equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints)
}

// daemonSetsOfRevision maps a ControllerRevision to its controlling
// DaemonSet or, for an orphan, to the DaemonSets whose selector matches it.
func (r *reconciler) daemonSetsOfRevision(cr *appsv1.ControllerRevision) []reconcile.Request {
	if ref := metav1.GetControllerOfNoCopy(cr); ref != nil {
		if ds := r.resolve(cr.Namespace, ref); ds != nil {
			return []reconcile.Request{request(ds.Namespace, ds.Name)}
		}
		return nil
	}
	if cr.DeletionTimestamp != nil {
		return nil
	}
	var out []reconcile.Request
	for _, ds := range r.matchingDaemonSets(cr.Namespace, cr.Labels) {
		out = append(out, request(ds.Namespace, ds.Name))
	}
	return out
}

// resolve returns the cached DaemonSet ref points to, or nil when ref is
// not a DaemonSet or names one that no longer exists (other UID).
func (r *reconciler) resolve(ns string, ref *metav1.OwnerReference) *appsv1.DaemonSet {
	if ref.Kind != dsKind.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != dsKind.Group {
		return nil
	}
	ds, err := r.dsInf.Lister().Namespace(ns).Get(ref.Name)
	if err != nil || ds.UID != ref.UID {
		return nil
	}
	return ds
}

// matchingDaemonSets returns the cached DaemonSets of namespace ns whose
// (non-empty) selector matches lbls: the candidates to adopt an orphan.
func (r *reconciler) matchingDaemonSets(ns string, lbls map[string]string) []*appsv1.DaemonSet {
	all, err := r.dsInf.Lister().Namespace(ns).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.DaemonSet
	set := labels.Set(lbls)
	for _, ds := range all {
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(set) {
			continue
		}
		out = append(out, ds)
	}
	return out
}

// allDaemonSets returns every cached DaemonSet.
func (r *reconciler) allDaemonSets() []*appsv1.DaemonSet {
	all, err := r.dsInf.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	return all
}
