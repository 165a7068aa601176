package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Options configure New.
type Options struct {
	// Endpoints are the client URLs of the etcd members (all of them, so
	// that the client fails over). Ignored when Client is set.
	Endpoints []string
	// Client, if set, is used instead of dialling Endpoints; Close does not
	// close it.
	Client *clientv3.Client
	// Prefix is prepended to every key; keys of different stores sharing
	// an etcd must live under disjoint prefixes. Empty means none.
	Prefix string
	// DialTimeout bounds the first connection. Default 5s.
	DialTimeout time.Duration
	// WatchBuffer caps the events a watcher may have queued but not yet
	// received; one more ends it with storage.ErrWatcherTooSlow. Default
	// 10000 (as the embedded stores).
	WatchBuffer int
	// Logger receives operational messages. Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultWatchBuffer = 10000
	defaultDialTimeout = 5 * time.Second
)

// Store is storage.Store over etcd. Safe for concurrent use.
type Store struct {
	c           *clientv3.Client
	ownClient   bool // Close closes c
	prefix      string
	watchBuffer int
	log         *slog.Logger

	// compacted is a lower bound of etcd's compacted revision: it only
	// grows, from this store's compactions and from what refreshCompacted
	// found; etcd's own is never below it.
	compacted atomic.Int64

	// mu orders Close against Watch registering a watch goroutine.
	mu        sync.Mutex
	closeOnce sync.Once
	closed    atomic.Bool // set under mu
	nextWatch atomic.Uint64
	// closing is closed by Close; every watch goroutine selects on it.
	closing  chan struct{}
	watchers sync.WaitGroup // one per running watch goroutine
}

var _ storage.Store = (*Store)(nil)

// New connects to etcd and returns a store. It fails if no member answers
// within Options.DialTimeout.
func New(ctx context.Context, opts Options) (*Store, error) {
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = defaultWatchBuffer
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Store{
		c: opts.Client, prefix: opts.Prefix, watchBuffer: opts.WatchBuffer,
		log: opts.Logger, closing: make(chan struct{}),
	}
	if s.c == nil {
		if len(opts.Endpoints) == 0 {
			return nil, errors.New("etcd: no endpoints")
		}
		c, err := clientv3.New(clientv3.Config{
			Endpoints:   opts.Endpoints,
			DialTimeout: opts.DialTimeout,
			Logger:      zap.NewNop(),
			// Keepalives detect a dead member under an idle watch.
			DialKeepAliveTime:    10 * time.Second,
			DialKeepAliveTimeout: 5 * time.Second,
		})
		if err != nil {
			return nil, fmt.Errorf("etcd: connect to %v: %w", opts.Endpoints, err)
		}
		s.c, s.ownClient = c, true
	}
	// One linearizable read proves the cluster answers and learns the
	// compacted revision.
	cctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	if _, err := s.CompactedRevision(cctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("etcd: first read from %v: %w", opts.Endpoints, err)
	}
	return s, nil
}

// Client returns the etcd client the store uses.
func (s *Store) Client() *clientv3.Client { return s.c }

// Close ends every watch with storage.ErrClosed, waits for the watch
// goroutines and closes the client if New made it. Later calls return nil;
// every other method returns storage.ErrClosed afterwards.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed.Store(true)
		close(s.closing)
		s.mu.Unlock()
		s.watchers.Wait()
		if s.ownClient {
			if cerr := s.c.Close(); cerr != nil && !errors.Is(cerr, context.Canceled) {
				err = fmt.Errorf("etcd: close client: %w", cerr)
			}
		}
	})
	return err
}

// Stats reports the number of keys under the prefix and the database size
// reported by the first endpoint that answers.
func (s *Store) Stats(ctx context.Context) (storage.Stats, error) {
	n, err := s.Count(ctx, "")
	if err != nil {
		return storage.Stats{}, err
	}
	var last error
	for _, ep := range s.c.Endpoints() {
		st, err := s.c.Status(ctx, ep)
		if err == nil {
			return storage.Stats{Keys: n, SizeBytes: st.DbSize}, nil
		}
		last = err
	}
	return storage.Stats{}, s.fail("stats", "", last)
}

// enter fails with storage.ErrClosed once Close has been called.
func (s *Store) enter() error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return nil
}

// fail wraps an etcd error of operation op on key; any failure after Close
// is storage.ErrClosed.
func (s *Store) fail(op, key string, err error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return fmt.Errorf("etcd: %s %q: %w", op, key, err)
}

// full maps a storage key to its etcd key.
func (s *Store) full(key string) string { return s.prefix + key }

// rangeOf returns the etcd range [start, end) of the keys under prefix.
func (s *Store) rangeOf(prefix string) (start, end string) {
	start = s.full(prefix)
	if start == "" {
		return "\x00", "\x00" // etcd: every key
	}
	return start, clientv3.GetPrefixRangeEnd(start)
}

// kv converts an etcd key-value, stripping the prefix. etcd's client hands
// out fresh buffers, so the value is not copied again.
func (s *Store) kv(k *kvPair) storage.KeyValue {
	return storage.KeyValue{
		Key: string(k.Key[len(s.prefix):]), Value: k.Value,
		CreateRevision: k.CreateRevision, ModRevision: k.ModRevision,
	}
}

// isCompacted and isFuture recognise etcd's revision errors as returned by
// the client (rpctypes values) or raw from gRPC.
func isCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrGRPCCompacted) ||
		rpctypes.ErrorDesc(err) == rpctypes.ErrCompacted.Error()
}

func isFuture(err error) bool {
	return errors.Is(err, rpctypes.ErrFutureRev) || errors.Is(err, rpctypes.ErrGRPCFutureRev) ||
		rpctypes.ErrorDesc(err) == rpctypes.ErrFutureRev.Error()
}
