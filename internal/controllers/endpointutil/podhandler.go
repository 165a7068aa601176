package endpointutil

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// PodHandler enqueues the Services whose endpoints a pod event may
// change: on add and delete, the Services selecting the pod; on update,
// when its readiness, deletion, IPs, labels, hostname or subdomain
// changed, the Services that select it before or after (only those whose
// membership changed when nothing but labels did).
type PodHandler struct {
	Services *informer.Informer[*corev1.Service]
	Queue    handler.Queue
}

// OnAdd implements informer.Handler.
func (h *PodHandler) OnAdd(pod *corev1.Pod, initial bool) {
	h.enqueue(h.selecting(pod.Namespace, pod.Labels), initial)
}

// OnDelete implements informer.Handler.
func (h *PodHandler) OnDelete(pod *corev1.Pod, _ bool) {
	h.enqueue(h.selecting(pod.Namespace, pod.Labels), false)
}

// OnUpdate implements informer.Handler.
func (h *PodHandler) OnUpdate(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return // resync: the Services resync themselves
	}
	changed := podEndpointsChanged(old, cur)
	membership := !maps.Equal(old.Labels, cur.Labels) ||
		old.Spec.Hostname != cur.Spec.Hostname || old.Spec.Subdomain != cur.Spec.Subdomain
	if !changed && !membership {
		return
	}
	now := h.selecting(cur.Namespace, cur.Labels)
	if !membership {
		h.enqueue(now, false)
		return
	}
	before := h.selecting(old.Namespace, old.Labels)
	out := map[string]bool{}
	for k := range now {
		if changed || !before[k] {
			out[k] = true
		}
	}
	for k := range before {
		if changed || !now[k] {
			out[k] = true
		}
	}
	h.enqueue(out, false)
}

// podEndpointsChanged says whether an update may change the pod's
// endpoint: deletion, readiness or IPs.
func podEndpointsChanged(old, cur *corev1.Pod) bool {
	if (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) {
		return true
	}
	if podutil.IsPodReady(old) != podutil.IsPodReady(cur) {
		return true
	}
	if old.Status.Phase != cur.Status.Phase {
		return true
	}
	a, b := PodIPs(old), PodIPs(cur)
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return true
		}
	}
	return false
}

// selecting returns the keys (namespace/name) of the Services of ns whose
// selector (nil selects nothing) matches set.
func (h *PodHandler) selecting(ns string, set map[string]string) map[string]bool {
	svcs, err := h.Services.Lister().Namespace(ns).List(labels.Everything())
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, s := range svcs {
		if s.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromValidatedSet(s.Spec.Selector).Matches(labels.Set(set)) {
			out[s.Namespace+"/"+s.Name] = true
		}
	}
	return out
}

func (h *PodHandler) enqueue(keys map[string]bool, low bool) {
	for k := range keys {
		ns, name := splitKey(k)
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
		if low {
			h.Queue.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, req)
		} else {
			h.Queue.Add(req)
		}
	}
}

func splitKey(k string) (string, string) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}
