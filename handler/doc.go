// Package handler turns informer events into reconcile requests.
//
// An EventHandler[T] is an informer.Handler[T]: register it on an informer
// and every add, update and delete of a T that passes its predicates is
// mapped to zero or more reconcile.Requests, which are added to a Queue
// (the controller's workqueue). What an object maps to is a MapFunc:
//
//   - Object: the object itself (the kind the controller is "for");
//   - ControllerOwner: the object's controller, the ownerReference with
//     controller=true, when it is of a given group and kind (the kind the
//     controller "owns");
//   - Owner: every owner of a given group and kind;
//   - any func(T) []reconcile.Request of your own (a "watch" with a
//     mapping), for example all objects that reference this one.
//
// # Priorities
//
// Adds from the informer's initial list and from periodic resyncs are
// queued at workqueue.LowPriority, every other event at the default
// priority, so a user's fresh change overtakes a backlog of unchanged
// objects after a restart.
//
// # Updates
//
// An update maps both the old and the new object and enqueues the union,
// so that when an object moves from one owner (or mapped key) to another
// both are reconciled. A MapFunc must not modify the object it is given,
// which is shared with the informer's cache; it runs on the informer's
// handler goroutine and should be quick (a cache lookup, not an API call).
package handler
