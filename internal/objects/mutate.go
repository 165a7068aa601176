package objects

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// MutateFunc changes obj in place for a system write (binding a pod,
// finalizing a namespace). Returning an error aborts the write.
type MutateFunc func(obj runtime.Object) error

// Mutate applies fn to the current object and writes the result with
// compare-and-swap, retrying on races. Unlike Update it bypasses the
// strategy (the caller is the server itself, enforcing its own rules), but
// it keeps the generic rules: no write when nothing changed, and an object
// being deleted that nothing holds any more is removed.
func (s *Store) Mutate(ctx context.Context, namespace, name string, fn MutateFunc, opts WriteOptions) (runtime.Object, error) {
	key := s.res.Key(namespace, name)
	for {
		kv, err := s.kv.Get(ctx, key)
		if err != nil {
			return nil, s.storageError(err, name)
		}
		obj, err := s.decode(ctx, kv)
		if err != nil {
			return nil, apiError(err)
		}
		if err := fn(obj); err != nil {
			return nil, err
		}
		out, err := s.writeMutated(ctx, kv, obj, opts)
		var conflict *storage.ConflictError
		if errors.As(err, &conflict) && retryConflict(ctx) {
			continue
		}
		if err != nil {
			return nil, s.storageError(err, name)
		}
		return out, nil
	}
}

func (s *Store) writeMutated(ctx context.Context, kv storage.KeyValue, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	m := accessor(obj)
	value, err := s.encode(ctx, obj)
	if err != nil {
		return nil, apiError(err)
	}
	if opts.DryRun {
		return obj, nil
	}
	if m.GetDeletionTimestamp() != nil && !s.holdsDeletion(obj, m) {
		rev, _, err := s.deleteKey(ctx, kv, obj)
		if err != nil {
			return nil, err
		}
		return obj, setRV(obj, rev)
	}
	if string(value) == string(kv.Value) {
		return obj, nil
	}
	rev, err := s.kv.Update(ctx, kv.Key, value, kv.ModRevision)
	if err != nil {
		return nil, err
	}
	return obj, setRV(obj, rev)
}
