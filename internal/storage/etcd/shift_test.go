package etcd_test

import (
	"context"
	"errors"
	"sync"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// shifted presents an etcd store opened on a shared, non-empty etcd as the
// fresh, empty store the conformance suite expects: revisions are shifted
// down by base, the etcd revision when the store was opened. Every subtest
// has its own key prefix and runs alone, so the suite's revision
// arithmetic holds. Nothing else is changed: every call goes to the etcd
// store.
type shifted struct {
	s    storage.Store
	base int64
}

func (x *shifted) down(rev int64) int64 {
	if rev == 0 {
		return 0
	}
	return max(rev-x.base, 0)
}

func (x *shifted) up(rev int64) int64 {
	if rev == 0 {
		return 0
	}
	return rev + x.base
}

func (x *shifted) kv(kv storage.KeyValue) storage.KeyValue {
	kv.CreateRevision, kv.ModRevision = x.down(kv.CreateRevision), x.down(kv.ModRevision)
	return kv
}

// err rewrites the revisions carried by the contract's typed errors.
func (x *shifted) err(err error) error {
	var ce *storage.ConflictError
	var cp *storage.CompactedError
	var fe *storage.FutureRevisionError
	switch {
	case errors.As(err, &ce):
		return &storage.ConflictError{Key: ce.Key, Current: x.kv(ce.Current)}
	case errors.As(err, &cp):
		return &storage.CompactedError{Requested: x.down(cp.Requested), Compacted: x.down(cp.Compacted)}
	case errors.As(err, &fe):
		return &storage.FutureRevisionError{Requested: x.down(fe.Requested), Current: x.down(fe.Current)}
	}
	return err
}

func (x *shifted) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	kv, err := x.s.Get(ctx, key)
	return x.kv(kv), x.err(err)
}

func (x *shifted) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	opts.Revision = x.up(opts.Revision)
	res, err := x.s.List(ctx, prefix, opts)
	for i := range res.KVs {
		res.KVs[i] = x.kv(res.KVs[i])
	}
	res.Revision = x.down(res.Revision)
	return res, x.err(err)
}

func (x *shifted) Count(ctx context.Context, prefix string) (int64, error) {
	return x.s.Count(ctx, prefix)
}

func (x *shifted) CurrentRevision(ctx context.Context) (int64, error) {
	rev, err := x.s.CurrentRevision(ctx)
	return x.down(rev), x.err(err)
}

func (x *shifted) Create(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := x.s.Create(ctx, key, value)
	return x.down(rev), x.err(err)
}

func (x *shifted) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	rev, err := x.s.Update(ctx, key, value, x.up(expected))
	return x.down(rev), x.err(err)
}

func (x *shifted) Delete(ctx context.Context, key string, expected int64) (int64, storage.KeyValue, error) {
	rev, kv, err := x.s.Delete(ctx, key, x.up(expected))
	return x.down(rev), x.kv(kv), x.err(err)
}

func (x *shifted) Compact(ctx context.Context, rev int64) error {
	return x.err(x.s.Compact(ctx, x.up(rev)))
}

func (x *shifted) CompactedRevision(ctx context.Context) (int64, error) {
	rev, err := x.s.CompactedRevision(ctx)
	return x.down(rev), x.err(err)
}

func (x *shifted) Stats(ctx context.Context) (storage.Stats, error) { return x.s.Stats(ctx) }
func (x *shifted) Close() error                                     { return x.s.Close() }

func (x *shifted) Watch(ctx context.Context, prefix string, after int64) (storage.WatchStream, error) {
	w, err := x.s.Watch(ctx, prefix, x.up(after))
	if err != nil {
		return nil, x.err(err)
	}
	sw := &shiftedWatch{x: x, w: w, out: make(chan storage.WatchResponse), stopc: make(chan struct{})}
	go sw.run()
	return sw, nil
}

// shiftedWatch forwards a watch's responses with shifted revisions. Its
// goroutine ends when the inner stream ends; after Stop it drops what it
// cannot hand over.
type shiftedWatch struct {
	x     *shifted
	w     storage.WatchStream
	out   chan storage.WatchResponse
	stopc chan struct{}
	once  sync.Once
}

func (sw *shiftedWatch) run() {
	defer close(sw.out)
	for resp := range sw.w.Responses() {
		evs := make([]storage.Event, len(resp.Events))
		for i, e := range resp.Events {
			e.Revision = sw.x.down(e.Revision)
			evs[i] = e
		}
		resp.Events, resp.Revision = evs, sw.x.down(resp.Revision)
		select {
		case sw.out <- resp:
		case <-sw.stopc:
		}
	}
}

func (sw *shiftedWatch) Responses() <-chan storage.WatchResponse { return sw.out }
func (sw *shiftedWatch) RequestProgress()                        { sw.w.RequestProgress() }
func (sw *shiftedWatch) Err() error                              { return sw.x.err(sw.w.Err()) }

func (sw *shiftedWatch) Stop() {
	sw.once.Do(func() { close(sw.stopc) })
	sw.w.Stop()
}
