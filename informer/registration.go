package informer

import (
	"context"
	"errors"
	"fmt"

	"github.com/setpoint-dev/setpoint/cache"
)

const defaultHandlerName = "unnamed"

// AddEventHandler registers h. It works before and during Run: a handler
// added while the cache holds objects first gets every cached object as
// OnAdd(obj, true), before any later notification. It fails with
// ErrStopped once Run has returned, and on a negative resync period.
func (i *Informer[T]) AddEventHandler(h Handler[T], opts HandlerOptions) (*Registration, error) {
	if h == nil {
		return nil, fmt.Errorf("informer %s: add handler: nil handler", i.name)
	}
	resync := i.defaultResync
	if opts.ResyncPeriod != nil {
		resync = *opts.ResyncPeriod
	}
	if resync < 0 {
		return nil, fmt.Errorf("informer %s: add handler: negative resync period %v", i.name, resync)
	}
	name := opts.Name
	if name == "" {
		name = defaultHandlerName
	}

	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return nil, fmt.Errorf("informer %s: add handler %q: %w", i.name, name, ErrStopped)
	}
	l := newListener(h, name, resync, i.metrics.pendingGauge(i.name, name))
	// Holding mu, no batch is being applied: the store content is exactly
	// what earlier handlers have been handed, and every later batch will
	// be handed to l after these adds.
	for _, obj := range i.indexer.List() {
		l.add(notification[T]{kind: cache.EventAdd, new: obj, initial: true})
	}
	reg := &Registration{owner: i, name: name}
	reg.synced = func() bool {
		// queue.HasSynced first: once it is true every initial-list
		// notification has been counted in initialPending.
		return i.queue.HasSynced() && l.initialPending.Load() == 0
	}
	i.listeners[reg] = l
	i.order = append(i.order, l)
	if i.started {
		i.startListener(l)
	}
	return reg, nil
}

// RemoveEventHandler unregisters r: no callback of its handler starts
// afterwards (one already running finishes) and its pending notifications
// are dropped. It does not wait for a running callback, so a handler may
// remove itself. Removing twice, or a registration of another informer,
// is an error.
func (i *Informer[T]) RemoveEventHandler(r *Registration) error {
	if r == nil {
		return fmt.Errorf("informer %s: remove handler: nil registration", i.name)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	l, ok := i.listeners[r]
	if !ok {
		return fmt.Errorf("informer %s: remove handler %q: %w", i.name, r.name, errNotRegistered)
	}
	delete(i.listeners, r)
	for k, o := range i.order {
		if o == l {
			i.order = append(i.order[:k:k], i.order[k+1:]...)
			break
		}
	}
	if l.cancelResync != nil {
		l.cancelResync()
	}
	i.dueMu.Lock()
	delete(i.due, l)
	i.dueMu.Unlock()
	l.stop()
	return nil
}

var errNotRegistered = errors.New("not registered with this informer")

// startListener starts l's delivery goroutine and, with a resync period,
// its resync ticker. Caller holds mu, with started set and stopped not.
func (i *Informer[T]) startListener(l *listener[T]) {
	i.wg.Go(l.run)
	if l.resync <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(i.runCtx)
	l.cancelResync = cancel
	ticker := i.clock.NewTicker(l.resync)
	i.wg.Go(func() {
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C():
				i.requestResync(l)
			}
		}
	})
}

// requestResync marks l due and asks the queue for a ResyncBatch. The
// batch is built from the store behind every batch already queued, so it
// can only carry states l has been (or will first be) handed.
func (i *Informer[T]) requestResync(l *listener[T]) {
	i.dueMu.Lock()
	i.due[l] = struct{}{}
	i.dueMu.Unlock()
	if err := i.queue.Resync(); err != nil && !errors.Is(err, cache.ErrClosed) {
		i.log.Error("informer: resync", "handler", l.name, "err", err)
	}
}
