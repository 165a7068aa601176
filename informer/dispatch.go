package informer

import (
	"errors"
	"fmt"

	"github.com/setpoint-dev/setpoint/cache"
)

// popLoop is the dispatcher: it pops batches in order until the queue is
// closed.
func (i *Informer[T]) popLoop() {
	for {
		err := i.queue.Pop(i.process)
		if errors.Is(err, cache.ErrClosed) {
			return
		}
		if err != nil {
			// The batch is lost for the store; the reflector's next relist
			// repairs it.
			i.log.Error("informer: processing batch", "err", err)
		}
	}
}

// process applies one batch to the store and hands its notifications to
// the listeners: every listener for watch events and relists, only the
// listeners whose resync is due for a ResyncBatch.
func (i *Informer[T]) process(b cache.Batch[T]) error {
	// The queue counts this batch as unprocessed until process returns, so
	// HasSynced is false exactly while the initial list is dispatched.
	initial := !i.queue.HasSynced()

	i.mu.Lock()
	defer i.mu.Unlock()
	events, err := cache.Apply(i.indexer, b)
	targets := i.order
	if b.Kind == cache.ResyncBatch {
		targets = i.takeDue()
	}
	for _, ev := range events {
		n, ok := i.toNotification(ev, initial)
		if !ok {
			continue
		}
		for _, l := range targets {
			l.add(n)
		}
	}
	if err != nil {
		return fmt.Errorf("informer %s: %w", i.name, err)
	}
	return nil
}

// takeDue returns the registered listeners marked due, in registration
// order, and clears the marks. Caller holds mu.
func (i *Informer[T]) takeDue() []*listener[T] {
	i.dueMu.Lock()
	defer i.dueMu.Unlock()
	var out []*listener[T]
	for _, l := range i.order {
		if _, ok := i.due[l]; ok {
			out = append(out, l)
		}
	}
	clear(i.due)
	return out
}

// toNotification converts a store event. A deletion whose final state the
// queue could not recover (a tombstone without object) has no object to
// hand over; it is logged and skipped.
func (i *Informer[T]) toNotification(ev cache.Event[T], initial bool) (notification[T], bool) {
	switch ev.Type {
	case cache.EventAdd:
		return notification[T]{kind: ev.Type, new: ev.New, initial: initial}, true
	case cache.EventUpdate:
		return notification[T]{kind: ev.Type, old: ev.Old, new: ev.New}, true
	case cache.EventDelete:
		if ev.Tombstone != nil && !ev.Tombstone.ObjKnown {
			i.log.Warn("informer: deletion without known final state not delivered", "key", ev.Key)
			return notification[T]{}, false
		}
		return notification[T]{kind: ev.Type, old: ev.Old, unknown: ev.Tombstone != nil}, true
	}
	i.log.Error("informer: unknown event type", "type", ev.Type, "key", ev.Key)
	return notification[T]{}, false
}
