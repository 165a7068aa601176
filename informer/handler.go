package informer

import (
	"time"
)

// Handler receives an informer's notifications. Its methods are called
// from one goroutine per registration, one at a time, in the order the
// informer produced the notifications; a slow handler delays only itself.
// Objects passed in are shared with the cache and every other handler:
// never modify them (deep-copy first).
type Handler[T any] interface {
	// OnAdd reports an object new to the cache. isInInitialList is true
	// for objects of the informer's initial list and for the cache content
	// replayed to a handler registered late; false for objects created
	// afterwards (or reappearing in a later relist).
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate reports a changed object: oldObj is the state the cache held
	// before, newObj the new one. On a periodic resync, and for objects a
	// relist returned unchanged, oldObj == newObj (the same pointer for a
	// resync). Handlers that only care about real changes compare
	// resourceVersions.
	OnUpdate(oldObj, newObj T)
	// OnDelete reports an object removed from the cache. obj is its last
	// known state. finalStateUnknown is true when the deletion was inferred
	// from a relist that lacked the object (the watch missed the delete):
	// obj is then the last state the informer saw, not the final one.
	OnDelete(obj T, finalStateUnknown bool)
}

// HandlerFuncs adapts plain functions to Handler. A nil func ignores its
// notifications.
type HandlerFuncs[T any] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd implements Handler.
func (f HandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate implements Handler.
func (f HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete implements Handler.
func (f HandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj, finalStateUnknown)
	}
}

// HandlerOptions tune one registration.
type HandlerOptions struct {
	// ResyncPeriod is how often the cache is replayed to this handler as
	// OnUpdate(obj, obj). nil selects the informer's Options.ResyncPeriod;
	// a zero period means never. Negative periods are rejected.
	ResyncPeriod *time.Duration
	// Name labels the handler in the pending-notifications metric and in
	// logs. Default "unnamed". Handlers sharing a name (and informer name)
	// share one metric series, which then holds their sum.
	Name string
}

// Registration is the handle AddEventHandler returns: pass it to
// RemoveEventHandler, and poll HasSynced before trusting that the handler
// has seen the initial state.
type Registration struct {
	// owner is the informer the registration belongs to; RemoveEventHandler
	// of another informer rejects it.
	owner any
	name  string
	// synced reports the registration's HasSynced; fixed at creation.
	synced func() bool
}

// HasSynced reports whether the informer has synced and this handler has
// returned from every initial-list notification it was handed (for a
// handler added late: from every replayed add). It never turns false
// again, except that a registration removed before that point stays
// false.
func (r *Registration) HasSynced() bool { return r.synced() }

// Name returns the handler's name (HandlerOptions.Name or its default).
func (r *Registration) Name() string { return r.name }
