package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// minHealthyWatch: a watch that ends sooner than this without delivering
// an event counts as a failure, so a server that closes every watch at
// once is not hammered in a tight loop.
const minHealthyWatch = time.Second

// errShortWatch reports a watch that ended at once without events.
var errShortWatch = errors.New("watch ended in under a second without events")

// listAndWatch brings the sink to the server's state, by a streaming list
// or a paginated list, then follows changes until the watch can no longer
// resume. It returns nil when a relist is due (the history it needs is
// gone) and an error when the list or the watch failed; Run backs off in
// both cases.
func (r *Reflector[T, L]) listAndWatch(ctx context.Context) error {
	var w watch.Interface
	if !r.streamingOff {
		var err error
		if w, err = r.streamList(ctx); err != nil {
			return err
		}
	}
	if w == nil {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	return r.watchLoop(ctx, w)
}

// watchLoop follows w (nil: open one) and re-opens a watch from the last
// synced resourceVersion each time one ends, so the sink sees every change
// exactly once without a relist. It returns nil when the server no longer
// has that version (410) or does not have it yet (too large, after a
// server restore): a relist is due. Otherwise it returns the error that
// ended watching.
func (r *Reflector[T, L]) watchLoop(ctx context.Context, w watch.Interface) error {
	for {
		if w == nil {
			var err error
			w, err = r.openWatch(ctx)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil && versionUnavailable(err):
				r.log.Info("watch position unavailable, relisting", "err", err)
				r.watchPositionGone()
				return nil
			case err != nil && rewatchable(err):
				r.setError(err)
				r.log.Warn("watch failed, retrying", "err", err)
				if !r.backoff.wait(ctx) {
					return nil
				}
				continue
			case err != nil:
				return err
			}
			r.setError(nil)
		}
		err := r.handleWatch(ctx, w, nil)
		w = nil
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil: // the stream ended: resume at once
			r.log.Debug("watch ended, resuming", "resourceVersion", r.LastSyncResourceVersion())
		case versionUnavailable(err):
			r.log.Info("watch position unavailable, relisting", "err", err)
			r.watchPositionGone()
			return nil
		default:
			r.setError(err)
			r.log.Warn("watch ended with an error, resuming", "err", err)
			if !r.backoff.wait(ctx) {
				return nil
			}
		}
	}
}

// watchPositionGone is called when the server no longer serves a watch
// from LastSyncResourceVersion. The relist normally asks for that version
// and gets a newer state (a list at a version without a limit means "not
// older than"). A paginated list at a version is an exact read, though:
// while storage still has that history it returns the same old state, and
// the watch from it fails the same way, for as long as compaction takes.
// So when the lost position is the one an exact list just returned, the
// next list reads the newest state instead.
func (r *Reflector[T, L]) watchPositionGone() {
	if r.exactRV != "" && r.LastSyncResourceVersion() == r.exactRV {
		r.rvUnavailable = true
	}
}

// openWatch starts a plain watch after the last synced resourceVersion.
func (r *Reflector[T, L]) openWatch(ctx context.Context) (watch.Interface, error) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.LastSyncResourceVersion()
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("watch %s from resourceVersion %q: %w", r.name, opts.ResourceVersion, err)
	}
	return w, nil
}

// initialList collects the initial events of a streaming list until the
// bookmark that ends them.
type initialList[T any] struct {
	items []T
	// done is set once the initial-events-end bookmark has been handled
	// (the items were handed to the sink with Replace).
	done bool
}

// handleWatch feeds the events of w to the sink until w ends, ctx ends or
// an event says the watch failed; it always stops w. With init non-nil
// the watch is a streaming list: ADDED events are collected into init
// until the bookmark annotated k8s.io/initial-events-end, whose
// resourceVersion comes with the Replace of the collected items; handleWatch
// then returns nil at once, leaving w open for the caller when init.done.
func (r *Reflector[T, L]) handleWatch(ctx context.Context, w watch.Interface, init *initialList[T]) (err error) {
	defer func() {
		if init == nil || !init.done || err != nil {
			w.Stop()
		}
	}()
	start, events := r.clock.Now(), 0
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			if init != nil {
				return fmt.Errorf("watch %s: stream ended after %d initial events, before the initial-events-end bookmark", r.name, len(init.items))
			}
			if events == 0 && r.clock.Since(start) < minHealthyWatch {
				return fmt.Errorf("watch %s: %w", r.name, errShortWatch)
			}
			return nil
		}
		events++
		end, err := r.handleEvent(ev, init)
		if err != nil {
			return err
		}
		if end {
			return nil
		}
	}
}

// handleEvent applies one event. It returns true when it ended the initial
// events of a streaming list.
func (r *Reflector[T, L]) handleEvent(ev watch.Event, init *initialList[T]) (bool, error) {
	if ev.Type == watch.Error {
		return false, fmt.Errorf("watch %s: %w", r.name, apierrors.FromObject(ev.Object))
	}
	obj, ok := ev.Object.(T)
	if !ok {
		var zero T
		return false, fmt.Errorf("watch %s: %s event carries a %T, want %T", r.name, ev.Type, ev.Object, zero)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false, fmt.Errorf("watch %s: %s event object: %w", r.name, ev.Type, err)
	}
	rv := m.GetResourceVersion()
	if init != nil {
		return r.initialEvent(ev.Type, obj, m, init)
	}
	var sinkErr error
	switch ev.Type {
	case watch.Added:
		sinkErr = r.sink.Add(obj)
	case watch.Modified:
		sinkErr = r.sink.Update(obj)
	case watch.Deleted:
		sinkErr = r.sink.Delete(obj)
	case watch.Bookmark:
	default:
		return false, fmt.Errorf("watch %s: unexpected event type %q", r.name, ev.Type)
	}
	if sinkErr != nil {
		// One object the sink cannot take must not stop the others; a
		// relist would only fail on it again.
		r.log.Error("sink rejected a watch event", "type", ev.Type, "name", m.GetName(), "namespace", m.GetNamespace(), "err", sinkErr)
	}
	r.setLastSyncRV(rv)
	return false, nil
}

// initialEvent handles an event of the initial phase of a streaming list.
func (r *Reflector[T, L]) initialEvent(t watch.EventType, obj T, m metav1.Object, init *initialList[T]) (bool, error) {
	switch t {
	case watch.Added:
		init.items = append(init.items, obj)
		return false, nil
	case watch.Bookmark:
		if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
			return false, nil // a progress bookmark before the end
		}
		rv := m.GetResourceVersion()
		if err := r.sink.Replace(init.items, rv); err != nil {
			return false, fmt.Errorf("replace %s with %d streamed objects: %w", r.name, len(init.items), err)
		}
		r.log.Debug("streamed list", "objects", len(init.items), "resourceVersion", rv)
		init.items, init.done = nil, true
		r.rvUnavailable = false
		r.setLastSyncRV(rv)
		r.setError(nil)
		return true, nil
	}
	return false, fmt.Errorf("watch %s: %s event before the initial-events-end bookmark", r.name, t)
}

// rewatchable tells whether a failed watch request may simply be retried
// from the same resourceVersion: the server was unreachable, overloaded or
// failed internally, none of which says anything about the sink's state.
// Client errors (forbidden, not found, invalid) are not.
func rewatchable(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true // transport: refused, reset, TLS, DNS
	}
	code := st.Status().Code
	return code == 429 || code >= 500
}
