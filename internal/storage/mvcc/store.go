package mvcc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Options tune a Store. The zero value is usable.
type Options struct {
	// MaxBatch caps the number of writes committed together in one backend
	// transaction. Default 1024.
	MaxBatch int
	// WatchBuffer caps the number of events a watcher may have queued but
	// not yet received; one more ends the watch with
	// storage.ErrWatcherTooSlow. Default 10000.
	WatchBuffer int
	// Logger receives operational messages. Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultMaxBatch    = 1024
	defaultWatchBuffer = 10000
)

// liveKey is the in-memory state of a key that exists now.
type liveKey struct {
	key       string
	createRev int64
	modRev    int64
}

func liveLess(a, b liveKey) bool { return a.key < b.key }

// Store is the storage.Store implementation over a Backend.
type Store struct {
	b           Backend
	log         *slog.Logger
	maxBatch    int
	watchBuffer int

	// closeMu is held shared by every public operation for its whole
	// duration and exclusively by Close to set closed, so that once closed
	// is set no operation is running or can start.
	closeMu sync.RWMutex
	closed  bool // guarded by closeMu

	// commitMu serialises everything that calls b.Update: the committer
	// holds it for one batch, Compact for one compaction.
	commitMu sync.Mutex
	// rev is the revision of the last durable commit. It only advances,
	// after b.Update returned nil and before the writers are acknowledged.
	rev atomic.Int64
	// compacted is the compacted revision, advanced after the compaction
	// committed.
	compacted atomic.Int64

	// live holds every key that exists now, with its revisions. The
	// committer (holding commitMu) is its only writer: it reads it without
	// liveMu and writes it under liveMu; other readers take liveMu shared.
	// It always matches the backend at revision rev, which the committer
	// advances under liveMu: a reader holding liveMu sees both agree.
	liveMu sync.RWMutex
	live   *btree.BTreeG[liveKey]

	ops           chan *writeOp // writes waiting for the committer
	stopc         chan struct{} // closed by Close to stop the committer
	committerDone chan struct{} // closed when the committer has exited

	hub      hub
	watchers sync.WaitGroup // one per running watcher goroutine
}

var _ storage.Store = (*Store)(nil)

// New opens the engine over b, which may be empty or hold the data of an
// earlier Store. It rebuilds the in-memory key index from b and starts the
// committer goroutine; Close stops it and closes b.
func New(b Backend, opts Options) (*Store, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = defaultMaxBatch
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = defaultWatchBuffer
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Store{
		b:             b,
		log:           opts.Logger,
		maxBatch:      opts.MaxBatch,
		watchBuffer:   opts.WatchBuffer,
		live:          btree.NewG(32, liveLess),
		ops:           make(chan *writeOp, opts.MaxBatch),
		stopc:         make(chan struct{}),
		committerDone: make(chan struct{}),
	}
	if err := b.View(s.load); err != nil {
		return nil, fmt.Errorf("mvcc: open: %w", err)
	}
	s.hub.init(s.rev.Load())
	go s.commitLoop()
	return s, nil
}

// load reads the meta revisions and rebuilds the live index.
func (s *Store) load(tx ReadTx) error {
	cur, err := decodeRev(tx.Get(metaCurrent))
	if err != nil {
		return err
	}
	comp, err := decodeRev(tx.Get(metaCompacted))
	if err != nil {
		return err
	}
	s.rev.Store(cur)
	s.compacted.Store(comp)
	c := tx.Cursor()
	k, v := c.Seek([]byte{nsIndex})
	for k != nil && k[0] == nsIndex {
		userKey, rev, ok := parseIndexKey(k)
		if !ok {
			return fmt.Errorf("mvcc: corrupt index key %q", k)
		}
		// The first entry of a key is its newest.
		rec, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", userKey, err)
		}
		if rev > cur {
			return fmt.Errorf("mvcc: key %q has revision %d above the current revision %d", userKey, rev, cur)
		}
		if !rec.tombstone {
			s.live.ReplaceOrInsert(liveKey{key: string(userKey), createRev: rec.createRev, modRev: rev})
		}
		k, v = c.Seek(afterIndexKeys(userKey))
	}
	return nil
}

// enter guards a public operation against Close; a nil return must be
// paired with leave.
func (s *Store) enter() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return storage.ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.closeMu.RUnlock() }

// Close waits for running operations, stops the committer, ends every watch
// with storage.ErrClosed, waits for the watch goroutines and closes the
// backend. Later calls return nil; every other method returns
// storage.ErrClosed afterwards.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()

	close(s.stopc)
	<-s.committerDone
	s.hub.closeAll(storage.ErrClosed)
	s.watchers.Wait()
	if err := s.b.Close(); err != nil {
		return fmt.Errorf("mvcc: close backend: %w", err)
	}
	return nil
}

// Stats reports the number of live keys and the backend's size.
func (s *Store) Stats(ctx context.Context) (storage.Stats, error) {
	if err := s.enter(); err != nil {
		return storage.Stats{}, err
	}
	defer s.leave()
	s.liveMu.RLock()
	keys := s.live.Len()
	s.liveMu.RUnlock()
	size, err := s.b.Size()
	if err != nil {
		return storage.Stats{}, fmt.Errorf("mvcc: stats: %w", err)
	}
	return storage.Stats{Keys: int64(keys), SizeBytes: size}, nil
}
