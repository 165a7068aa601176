package boltdb

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

// bucketName is the one bucket holding the engine's keyspace.
var bucketName = []byte("setpoint")

// backend is an mvcc.Backend over one bbolt bucket. Every Update is one
// bolt read-write transaction, committed with an fsync.
type backend struct {
	db *bolt.DB
}

var _ mvcc.Backend = (*backend)(nil)

func openBackend(path string, o *bolt.Options) (*backend, error) {
	db, err := bolt.Open(path, 0o600, o)
	if err != nil {
		return nil, fmt.Errorf("boltdb: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("boltdb: create bucket in %s: %w", path, err)
	}
	return &backend{db: db}, nil
}

func (b *backend) View(fn func(mvcc.ReadTx) error) error {
	return b.db.View(func(tx *bolt.Tx) error {
		return fn(readTx{b: tx.Bucket(bucketName)})
	})
}

func (b *backend) Update(fn func(mvcc.WriteTx) error) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		return fn(writeTx{readTx{b: tx.Bucket(bucketName)}})
	})
}

// Size is the size of the bolt file's data as of the latest commit.
func (b *backend) Size() (int64, error) {
	var n int64
	err := b.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		return nil
	})
	return n, err
}

func (b *backend) Close() error { return b.db.Close() }

type readTx struct {
	b *bolt.Bucket
}

func (r readTx) Get(key []byte) []byte { return r.b.Get(key) }

func (r readTx) Cursor() mvcc.Cursor { return cursor{r.b.Cursor()} }

type writeTx struct {
	readTx
}

func (w writeTx) Put(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	return w.b.Put(key, value)
}

func (w writeTx) Delete(key []byte) error { return w.b.Delete(key) }

type cursor struct {
	c *bolt.Cursor
}

func (c cursor) Seek(key []byte) ([]byte, []byte) { return c.c.Seek(key) }

func (c cursor) Next() ([]byte, []byte) { return c.c.Next() }
