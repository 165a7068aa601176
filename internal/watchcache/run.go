package watchcache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

var (
	// errStreamEnded stands for a storage watch that closed without an
	// error while the cache was still running.
	errStreamEnded = errors.New("storage watch ended")
	// errMustRelist says the watch cannot continue from the cache revision
	// for a reason other than compaction.
	errMustRelist = errors.New("watch position is ambiguous")
)

// Run lists and watches the prefix and keeps the cache current until ctx is
// cancelled; then it ends every watcher and waits for the goroutines it
// started. Call it once.
func (c *Cache) Run(ctx context.Context) {
	c.wg.Add(1)
	go c.runBookmarks(ctx)
	c.loop(ctx)
	c.shutdown()
	c.wg.Wait()
}

// loop is the list-then-watch cycle. It returns when ctx is done.
func (c *Cache) loop(ctx context.Context) {
	needList, failures := true, 0
	for ctx.Err() == nil {
		if needList {
			if err := c.relist(ctx); err != nil {
				failures++
				c.cfg.Logger.Error("watch cache list failed", "err", err, "attempt", failures)
				c.sleep(ctx, failures)
				continue
			}
			needList = false
		}
		err := c.watchOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, storage.ErrCompacted), errors.Is(err, errMustRelist), errors.Is(err, errDecodeAnswered):
			c.cfg.Logger.Warn("watch cache cannot resume its watch; listing again", "revision", c.Revision(), "err", err)
			needList, failures = true, 0
		case errors.Is(err, errStreamEnded), errors.Is(err, storage.ErrWatcherTooSlow):
			c.cfg.Logger.Info("storage watch ended; watching again", "revision", c.Revision(), "err", err)
			failures = 0
		default:
			failures++
			c.cfg.Logger.Error("storage watch failed", "revision", c.Revision(), "err", err, "attempt", failures)
			c.sleep(ctx, failures)
		}
	}
}

// sleep waits the backoff of the n-th consecutive failure, or until ctx is
// done.
func (c *Cache) sleep(ctx context.Context, n int) {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}

// watchOnce runs one storage watch from the cache revision until it ends.
// It returns the reason (errStreamEnded when the stream closed cleanly).
func (c *Cache) watchOnce(ctx context.Context) error {
	from := c.Revision()
	stream, err := c.cfg.Store.Watch(ctx, c.cfg.Prefix, from)
	if err != nil {
		return fmt.Errorf("watch %s from %d: %w", c.cfg.Prefix, from, err)
	}
	defer stream.Stop()
	if from == 0 {
		// Watch from 0 means "from now": anything written between the list
		// of an empty store and now would be missed, so list again.
		cur, err := c.cfg.Store.CurrentRevision(ctx)
		if err != nil {
			return fmt.Errorf("current revision: %w", err)
		}
		if cur > 0 {
			return fmt.Errorf("store advanced to %d while watching from 0: %w", cur, errMustRelist)
		}
	}
	c.stream.Store(&streamBox{s: stream})
	defer c.stream.Store(nil)
	c.markReady()
	// A WaitForRevision that found no stream to ask relies on this.
	stream.RequestProgress()
	for {
		select {
		case <-ctx.Done():
			return nil
		case resp, ok := <-stream.Responses():
			if !ok {
				if err := stream.Err(); err != nil {
					return fmt.Errorf("watch %s: %w", c.cfg.Prefix, err)
				}
				return errStreamEnded
			}
			if err := c.apply(resp); err != nil {
				return err
			}
		}
	}
}

// relist lists the whole prefix at one revision and replaces the state.
func (c *Cache) relist(ctx context.Context) error {
	tree := btree.NewG(32, lessObject)
	opts := storage.ListOptions{Limit: c.cfg.ListPageSize}
	for {
		res, err := c.cfg.Store.List(ctx, c.cfg.Prefix, opts)
		if err != nil {
			return fmt.Errorf("list %s at revision %d: %w", c.cfg.Prefix, opts.Revision, err)
		}
		opts.Revision = res.Revision
		for _, kv := range res.KVs {
			o, err := c.newObject(kv)
			if _, answered := answerOf(err); answered {
				return err
			}
			if err != nil {
				c.cfg.Logger.Error("watch cache skips undecodable object", "err", err)
				continue
			}
			tree.ReplaceOrInsert(o)
		}
		if !res.More || len(res.KVs) == 0 {
			break
		}
		opts.StartKey = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	c.metrics.relist.Add(1)
	c.replace(tree, opts.Revision)
	c.cfg.Logger.Info("watch cache listed", "revision", opts.Revision, "objects", tree.Len())
	return nil
}

// replace installs a freshly listed state at rev. Watchers whose position
// the new window no longer serves are ended with Expired.
func (c *Cache) replace(tree *btree.BTreeG[*object], rev int64) {
	c.mu.Lock()
	old, wasReady := c.rev.Load(), c.ready
	c.objects = tree
	moved := !wasReady || rev != old
	if moved {
		c.win.reset(rev)
		c.setRevLocked(rev)
	}
	c.wmu.Lock()
	c.mu.Unlock()
	defer c.wmu.Unlock()
	if wasReady && moved {
		st := expiredStatus(fmt.Sprintf("too old resource version: %d (%d)", old, rev))
		c.forEachLiveLocked(func(w *Watcher) {
			c.metrics.expired.Add(1)
			c.endLiveLocked(w, &st, &ExpiredError{Requested: old, Oldest: rev})
		})
	}
	c.dispatchedRev = rev
}

// markReady opens the cache for reads once the first list is applied and
// its watch is established.
func (c *Cache) markReady() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		c.ready = true
		close(c.readyCh)
	}
}

// apply applies one storage watch response: its events, then its revision.
// An event Decode refused with a Status is not applied: the live watchers
// are ended with that Status and the error returned (the cache lists
// again).
func (c *Cache) apply(resp storage.WatchResponse) error {
	for _, ev := range resp.Events {
		if ev.Revision <= c.Revision() {
			continue // already applied (a re-watch overlapping a progress)
		}
		c.metrics.received.Add(1)
		e, err := c.buildEvent(ev)
		if st, answered := answerOf(err); answered {
			c.endLiveWith(st, err)
			return fmt.Errorf("%w at revision %d: %w", errDecodeAnswered, ev.Revision, err)
		}
		if err != nil {
			c.cfg.Logger.Error("watch cache skips undecodable event", "err", err)
		}
		c.advance(ev.Revision, e)
	}
	c.advance(resp.Revision, nil)
	return nil
}

// endLiveWith ends every live watcher with an ERROR frame carrying st.
func (c *Cache) endLiveWith(st metav1.Status, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.forEachLiveLocked(func(w *Watcher) { c.endLiveLocked(w, &st, err) })
}

// advance applies e (if not nil) and moves the revision to rev (if higher),
// then dispatches e to the live watchers.
func (c *Cache) advance(rev int64, e *event) {
	if e == nil && rev <= c.Revision() {
		return
	}
	c.mu.Lock()
	if e != nil {
		if e.deleted {
			c.objects.Delete(e.cur)
		} else {
			c.objects.ReplaceOrInsert(e.cur)
		}
		c.win.push(e)
	}
	if rev > c.rev.Load() {
		c.setRevLocked(rev)
	}
	c.wmu.Lock()
	c.mu.Unlock()
	if e != nil {
		c.dispatchLocked(e)
	}
	if rev > c.dispatchedRev {
		c.dispatchedRev = rev
	}
	c.wmu.Unlock()
}

// buildEvent decodes one storage event against the current state. Only the
// run loop calls it, so it reads the tree without mu.
func (c *Cache) buildEvent(ev storage.Event) (*event, error) {
	prev, _ := c.objects.Get(&object{key: ev.Key})
	e := &event{rev: ev.Revision, prev: prev}
	kv := storage.KeyValue{Key: ev.Key, ModRevision: ev.Revision, CreateRevision: ev.Revision}
	if prev != nil && !ev.Created {
		kv.CreateRevision = prev.createRev
	}
	switch ev.Type {
	case storage.EventPut:
		if ev.Created {
			e.prev = nil
		}
		kv.Value = ev.Value
	case storage.EventDelete:
		e.deleted = true
		kv.Value = ev.PrevValue
		if kv.Value == nil {
			return c.deletedFromCache(e)
		}
	default:
		return nil, fmt.Errorf("event on %q at revision %d: unknown type %v", ev.Key, ev.Revision, ev.Type)
	}
	cur, err := c.newObject(kv)
	if err != nil {
		return nil, err
	}
	e.cur = cur
	return e, nil
}

// deletedFromCache builds a delete event whose storage event carried no
// PrevValue, from the cached state re-stamped with the deletion revision.
func (c *Cache) deletedFromCache(e *event) (*event, error) {
	if e.prev == nil {
		return nil, fmt.Errorf("delete at revision %d: no previous value and key not cached", e.rev)
	}
	obj := e.prev.obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("delete of %q at revision %d: %w", e.prev.key, e.rev, err)
	}
	m.SetResourceVersion(strconv.FormatInt(e.rev, 10))
	p := e.prev
	e.cur = &object{key: p.key, namespace: p.namespace, obj: obj, labels: p.labels,
		fields: p.fields, rev: e.rev, createRev: p.createRev}
	return e, nil
}

// shutdown marks the cache stopped and ends the live watchers; catch-up
// goroutines see done and end their own watchers.
func (c *Cache) shutdown() {
	c.mu.Lock()
	c.stopped = true
	c.wmu.Lock()
	c.mu.Unlock()
	close(c.done)
	c.forEachLiveLocked(func(w *Watcher) { c.endLiveLocked(w, nil, ErrStopped) })
	c.wmu.Unlock()
}
