package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

type kvPair = mvccpb.KeyValue

// Get returns the current value of key (a linearizable read).
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	if err := s.enter(); err != nil {
		return storage.KeyValue{}, err
	}
	resp, err := s.c.Get(ctx, s.full(key))
	if err != nil {
		return storage.KeyValue{}, s.fail("get", key, err)
	}
	if len(resp.Kvs) == 0 {
		return storage.KeyValue{}, fmt.Errorf("etcd: get %q: %w", key, storage.ErrNotFound)
	}
	return s.kv(resp.Kvs[0]), nil
}

// List reads the keys under prefix as of opts.Revision with one etcd range
// (see storage.Reader).
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.Revision < 0 || opts.Limit < 0 {
		return storage.ListResult{}, fmt.Errorf("etcd: list %q: negative revision or limit", prefix)
	}
	if err := s.enter(); err != nil {
		return storage.ListResult{}, err
	}
	if opts.Revision > 0 && opts.Revision < s.compacted.Load() {
		return storage.ListResult{}, fmt.Errorf("etcd: list %q: %w", prefix,
			&storage.CompactedError{Requested: opts.Revision, Compacted: s.compacted.Load()})
	}
	start, end := s.rangeOf(prefix)
	if opts.StartKey != "" && s.full(opts.StartKey) > start {
		start = s.full(opts.StartKey)
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithRev(opts.Revision), clientv3.WithLimit(int64(opts.Limit))}
	resp, err := s.c.Get(ctx, start, ops...)
	if err != nil {
		return storage.ListResult{}, s.revisionError(ctx, "list", prefix, opts.Revision, err)
	}
	res := storage.ListResult{Revision: resp.Header.Revision, More: resp.More}
	if resp.More {
		// Count is the whole range's, not capped by the limit.
		res.Remaining = resp.Count - int64(len(resp.Kvs))
	}
	if opts.Revision > 0 {
		res.Revision = opts.Revision
	}
	if len(resp.Kvs) > 0 {
		res.KVs = make([]storage.KeyValue, len(resp.Kvs))
		for i, k := range resp.Kvs {
			res.KVs[i] = s.kv(k)
		}
	}
	return res, nil
}

// revisionError maps etcd's ErrCompacted and ErrFutureRev for a request at
// revision rev to the storage contract's typed errors.
func (s *Store) revisionError(ctx context.Context, op, key string, rev int64, err error) error {
	switch {
	case s.closed.Load():
		return storage.ErrClosed
	case isCompacted(err):
		comp, rerr := s.refreshCompacted(ctx)
		if rerr != nil {
			return s.fail(op, key, errors.Join(err, rerr))
		}
		return fmt.Errorf("etcd: %s %q: %w", op, key, &storage.CompactedError{Requested: rev, Compacted: comp})
	case isFuture(err):
		cur, rerr := s.CurrentRevision(ctx)
		if rerr != nil {
			return s.fail(op, key, errors.Join(err, rerr))
		}
		return fmt.Errorf("etcd: %s %q: %w", op, key, &storage.FutureRevisionError{Requested: rev, Current: cur})
	}
	return s.fail(op, key, err)
}

// Count returns how many keys are under prefix now (a count-only range).
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	start, end := s.rangeOf(prefix)
	resp, err := s.c.Get(ctx, start, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return 0, s.fail("count", prefix, err)
	}
	return resp.Count, nil
}

// CurrentRevision returns etcd's current revision, from the header of a
// linearizable count-only read: every write acknowledged before the call is
// at or below it.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	return s.currentRevision(ctx)
}

func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	resp, err := s.c.Get(ctx, s.full("\x00"), clientv3.WithCountOnly())
	if err != nil {
		return 0, s.fail("current revision", "", err)
	}
	return resp.Header.Revision, nil
}

// CompactedRevision returns etcd's compacted revision (0 if etcd was never
// compacted), checking with one read that etcd was not compacted beyond
// what the store knows.
func (s *Store) CompactedRevision(ctx context.Context) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	return s.refreshCompacted(ctx)
}

// refreshCompacted finds etcd's compacted revision, the oldest revision a
// read may ask for: the smallest r in [known, current] at which a
// count-only read does not fail with ErrCompacted. Compaction only moves
// forward, so the search starts at the known lower bound and usually ends
// with its first probe. An etcd never compacted reads at revision 1, its
// initial revision, which is reported as 0.
func (s *Store) refreshCompacted(ctx context.Context) (int64, error) {
	known := s.compacted.Load()
	readable := func(rev int64) (bool, error) {
		_, err := s.c.Get(ctx, s.full("\x00"), clientv3.WithCountOnly(), clientv3.WithRev(rev))
		switch {
		case err == nil:
			return true, nil
		case isCompacted(err):
			return false, nil
		}
		return false, s.fail("compacted revision", "", err)
	}
	lo := max(known, 1)
	ok, err := readable(lo)
	if err != nil {
		return 0, err
	}
	if !ok {
		hi, err := s.currentRevision(ctx) // always readable
		if err != nil {
			return 0, err
		}
		// Invariant: lo is compacted, hi readable.
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			ok, err := readable(mid)
			if err != nil {
				return 0, err
			}
			if ok {
				hi = mid
			} else {
				lo = mid
			}
		}
		lo = hi
	}
	if lo == 1 {
		lo = 0
	}
	s.raiseCompacted(lo)
	return s.compacted.Load(), nil
}

// raiseCompacted records that etcd is compacted at least to rev.
func (s *Store) raiseCompacted(rev int64) {
	for {
		cur := s.compacted.Load()
		if rev <= cur || s.compacted.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Compact compacts etcd's history before rev (etcd's Compact). At or below
// the known compacted revision it is a no-op; above the current revision it
// fails with *storage.FutureRevisionError.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := s.enter(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if rev <= s.compacted.Load() {
		return nil
	}
	_, err := s.c.Compact(ctx, rev)
	switch {
	case err == nil:
		s.raiseCompacted(rev)
		return nil
	case isCompacted(err):
		// Someone compacted further already.
		_, err := s.refreshCompacted(ctx)
		return err
	}
	return s.revisionError(ctx, "compact", "", rev, err)
}
