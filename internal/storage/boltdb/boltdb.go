package boltdb

import (
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

// Options tune Open. The zero value is usable.
type Options struct {
	// MaxBatch caps the writes committed (and fsynced) together; see
	// mvcc.Options.
	MaxBatch int
	// WatchBuffer caps the events queued per watcher; see mvcc.Options.
	WatchBuffer int
	// Logger receives operational messages. Default slog.Default().
	Logger *slog.Logger
	// LockTimeout bounds the wait for the file lock when another process
	// has the file open. Default 10s.
	LockTimeout time.Duration
	// InitialMmapSize is the initial size of bolt's memory map. While the
	// data fits in it, growing the file never waits for open read
	// transactions. Default 1 GiB (address space, not memory).
	InitialMmapSize int
}

// Open opens (creating if needed) the bolt file at path and returns a store
// over it. Only one Open of a file may be live at a time, in any process.
func Open(path string, opts Options) (storage.Store, error) {
	s, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func open(path string, opts Options) (*mvcc.Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if opts.InitialMmapSize <= 0 {
		opts.InitialMmapSize = 1 << 30
	}
	b, err := openBackend(path, &bolt.Options{
		Timeout: opts.LockTimeout,
		// The freelist is rebuilt when the file is opened instead of being
		// written by every commit.
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
	})
	if err != nil {
		return nil, err
	}
	s, err := mvcc.New(b, mvcc.Options{MaxBatch: opts.MaxBatch, WatchBuffer: opts.WatchBuffer, Logger: opts.Logger})
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("boltdb: %s: %w", path, err)
	}
	return s, nil
}
