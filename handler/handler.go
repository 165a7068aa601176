package handler

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Queue is where an EventHandler puts requests. A controller's workqueue
// (*workqueue.RateLimitingQueue[reconcile.Request]) satisfies it.
type Queue interface {
	// Add queues req at the default priority.
	Add(req reconcile.Request)
	// AddWithOpts queues reqs with a priority or delay.
	AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request)
}

// MapFunc maps an object to the requests it triggers. It must not modify
// obj; returning nil enqueues nothing.
type MapFunc[T any] func(obj T) []reconcile.Request

// EventHandler feeds a Queue from the events of an informer of T. It
// implements informer.Handler[T]. Its fields are fixed at construction.
type EventHandler[T metav1.Object] struct {
	queue Queue
	mapTo MapFunc[T]
	// preds are consulted in order; the first false drops the event.
	preds []predicate.Predicate
}

// New returns a handler that enqueues mapTo(obj) for every event passing
// all of preds.
func New[T metav1.Object](q Queue, mapTo MapFunc[T], preds ...predicate.Predicate) *EventHandler[T] {
	return &EventHandler[T]{queue: q, mapTo: mapTo, preds: preds}
}

// OnAdd implements informer.Handler. Objects of the initial list are queued
// at low priority.
func (h *EventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	e := predicate.CreateEvent{Object: obj, IsInInitialList: isInInitialList}
	for _, p := range h.preds {
		if !p.Create(e) {
			return
		}
	}
	h.enqueue(isInInitialList, h.mapTo(obj))
}

// OnUpdate implements informer.Handler. A resync (oldObj and newObj the
// same object) is queued at low priority.
func (h *EventHandler[T]) OnUpdate(oldObj, newObj T) {
	e := predicate.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}
	for _, p := range h.preds {
		if !p.Update(e) {
			return
		}
	}
	resync := metav1.Object(oldObj) == metav1.Object(newObj)
	reqs := h.mapTo(newObj)
	if !resync {
		reqs = union(h.mapTo(oldObj), reqs)
	}
	h.enqueue(resync, reqs)
}

// OnDelete implements informer.Handler.
func (h *EventHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	e := predicate.DeleteEvent{Object: obj, DeleteStateUnknown: finalStateUnknown}
	for _, p := range h.preds {
		if !p.Delete(e) {
			return
		}
	}
	h.enqueue(false, h.mapTo(obj))
}

func (h *EventHandler[T]) enqueue(low bool, reqs []reconcile.Request) {
	if len(reqs) == 0 {
		return
	}
	if low {
		h.queue.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, reqs...)
		return
	}
	for _, r := range reqs {
		h.queue.Add(r)
	}
}

// union returns a followed by the requests of b not in a.
func union(a, b []reconcile.Request) []reconcile.Request {
	if len(a) == 0 {
		return b
	}
	out := a
	for _, r := range b {
		dup := false
		for _, x := range a {
			if x == r {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, r)
		}
	}
	return out
}
