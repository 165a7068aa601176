package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Create puts value under key in a Txn guarded by create_revision == 0.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	k := s.full(key)
	resp, err := s.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).
		Commit()
	if err != nil {
		return 0, s.fail("create", key, err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("etcd: create %q: %w", key, storage.ErrKeyExists)
	}
	return resp.Header.Revision, nil
}

// exists is the compare every CAS carries: with it a mod_revision compare
// on a missing key (mod_revision 0) cannot succeed.
func exists(k string) clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(k), ">", 0)
}

// Update puts value under key in a Txn guarded by mod_revision ==
// expectedRevision; a failed guard reads the key in the same Txn.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	k := s.full(key)
	resp, err := s.c.Txn(ctx).
		If(exists(k), clientv3.Compare(clientv3.ModRevision(k), "=", expectedRevision)).
		Then(clientv3.OpPut(k, string(value))).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return 0, s.fail("update", key, err)
	}
	if !resp.Succeeded {
		return 0, s.casFailure("update", key, resp)
	}
	return resp.Header.Revision, nil
}

// Delete removes key, in a Txn guarded by mod_revision == expectedRevision
// unless that is 0, and returns the deleted key-value (etcd's prev_kv).
func (s *Store) Delete(ctx context.Context, key string, expectedRevision int64) (int64, storage.KeyValue, error) {
	if err := s.enter(); err != nil {
		return 0, storage.KeyValue{}, err
	}
	k := s.full(key)
	cmps := []clientv3.Cmp{exists(k)}
	if expectedRevision != 0 {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", expectedRevision))
	}
	resp, err := s.c.Txn(ctx).
		If(cmps...).
		Then(clientv3.OpDelete(k, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return 0, storage.KeyValue{}, s.fail("delete", key, err)
	}
	if !resp.Succeeded {
		return 0, storage.KeyValue{}, s.casFailure("delete", key, resp)
	}
	del := resp.Responses[0].GetResponseDeleteRange()
	if del == nil || len(del.PrevKvs) != 1 {
		return 0, storage.KeyValue{}, fmt.Errorf("etcd: delete %q: no previous value in the response", key)
	}
	return resp.Header.Revision, s.kv(del.PrevKvs[0]), nil
}

// casFailure turns the Else branch of a failed CAS Txn (a get of the key)
// into storage.ErrNotFound or a *storage.ConflictError.
func (s *Store) casFailure(op, key string, resp *clientv3.TxnResponse) error {
	get := resp.Responses[0].GetResponseRange()
	if get == nil || len(get.Kvs) == 0 {
		return fmt.Errorf("etcd: %s %q: %w", op, key, storage.ErrNotFound)
	}
	return fmt.Errorf("etcd: %s %q: %w", op, key, &storage.ConflictError{Key: key, Current: s.kv(get.Kvs[0])})
}
