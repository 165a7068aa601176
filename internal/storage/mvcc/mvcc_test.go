package mvcc_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/memory"
	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gatedBackend wraps the real memory backend to hold a commit at a gate and
// to make a commit fail after its writes were made.
type gatedBackend struct {
	mvcc.Backend
	mu      sync.Mutex
	updates int           // Update calls so far
	entered chan struct{} // closed when the next Update starts
	gate    chan struct{} // the next Update waits for it to close
	fail    error         // the next Update fails with it, applying nothing
}

func (g *gatedBackend) Update(fn func(mvcc.WriteTx) error) error {
	g.mu.Lock()
	entered, gate, fail := g.entered, g.gate, g.fail
	g.entered, g.gate, g.fail = nil, nil, nil
	g.updates++
	g.mu.Unlock()
	if entered != nil {
		close(entered)
	}
	if gate != nil {
		<-gate
	}
	return g.Backend.Update(func(tx mvcc.WriteTx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return fail
	})
}

func (g *gatedBackend) arm(fail error) (entered, gate chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.entered, g.gate, g.fail = make(chan struct{}), make(chan struct{}), fail
	return g.entered, g.gate
}

func (g *gatedBackend) failNext(err error) {
	g.mu.Lock()
	g.fail = err
	g.mu.Unlock()
}

func (g *gatedBackend) updateCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.updates
}

func newGated(t *testing.T, opts mvcc.Options) (*mvcc.Store, *gatedBackend) {
	g := &gatedBackend{Backend: memory.NewBackend()}
	s, err := mvcc.New(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, g
}

type result struct {
	rev  int64
	prev storage.KeyValue
	err  error
}

// batcher queues writes behind a commit held at the gate, one at a time
// and in order, so that they form one batch.
type batcher struct {
	t       *testing.T
	s       *mvcc.Store
	wg      sync.WaitGroup
	queued  int
	results []*result
}

func (b *batcher) add(write func() (int64, storage.KeyValue, error)) *result {
	r := &result{}
	b.results = append(b.results, r)
	b.wg.Go(func() { r.rev, r.prev, r.err = write() })
	b.queued++
	for mvcc.QueuedWrites(b.s) < b.queued {
		runtime.Gosched()
	}
	return r
}

func (b *batcher) create(key, value string) *result {
	return b.add(func() (int64, storage.KeyValue, error) {
		rev, err := b.s.Create(b.t.Context(), key, []byte(value))
		return rev, storage.KeyValue{}, err
	})
}

func (b *batcher) update(key, value string, expected int64) *result {
	return b.add(func() (int64, storage.KeyValue, error) {
		rev, err := b.s.Update(b.t.Context(), key, []byte(value), expected)
		return rev, storage.KeyValue{}, err
	})
}

func (b *batcher) delete(key string, expected int64) *result {
	return b.add(func() (int64, storage.KeyValue, error) { return b.s.Delete(b.t.Context(), key, expected) })
}

// holdCommit starts a write of key and returns once its commit is held
// at the gate, with the function that releases it.
func holdCommit(t *testing.T, s *mvcc.Store, g *gatedBackend, key string, fail error) (release func() *result) {
	entered, gate := g.arm(fail)
	r := &result{}
	done := make(chan struct{})
	go func() {
		r.rev, r.err = s.Create(t.Context(), key, []byte(key))
		close(done)
	}()
	<-entered
	return func() *result {
		close(gate)
		<-done
		return r
	}
}

func TestGroupCommitOneTransactionPerBatch(t *testing.T) {
	s, g := newGated(t, mvcc.Options{})
	w, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	release := holdCommit(t, s, g, "first", nil)
	b := &batcher{t: t, s: s}
	x1 := b.create("x", "x1")      // 2
	x2 := b.update("x", "x2", 2)   // 3
	stale := b.update("x", "x", 2) // conflict, sees x2 written in this batch
	del := b.delete("x", 3)        // 4, deletes x2
	x3 := b.create("x", "x3")      // 5
	dup := b.create("x", "dup")    // exists
	conflict := b.update("first", "f", 99)
	missing := b.delete("nope", 0)
	var creates []*result
	for i := range 8 {
		creates = append(creates, b.create(fmt.Sprintf("k%d", i), "v")) // 6..13
	}
	if r := release(); r.err != nil || r.rev != 1 {
		t.Fatalf("first write = %d, %v", r.rev, r.err)
	}
	b.wg.Wait()
	if n := g.updateCount(); n != 2 {
		t.Fatalf("%d backend commits, want 2 (one per batch)", n)
	}
	for want, r := range map[int64]*result{2: x1, 3: x2, 4: del, 5: x3} {
		if r.err != nil || r.rev != want {
			t.Errorf("write expected at %d got %d, %v", want, r.rev, r.err)
		}
	}
	var ce *storage.ConflictError
	if !errors.As(stale.err, &ce) || ce.Current.ModRevision != 3 || string(ce.Current.Value) != "x2" {
		t.Errorf("stale update in batch: %v", stale.err)
	}
	if !errors.As(conflict.err, &ce) || ce.Current.ModRevision != 1 || string(ce.Current.Value) != "first" {
		t.Errorf("conflicting update: %v", conflict.err)
	}
	if string(del.prev.Value) != "x2" || del.prev.ModRevision != 3 || del.prev.CreateRevision != 2 {
		t.Errorf("delete in batch returned %+v", del.prev)
	}
	if !errors.Is(dup.err, storage.ErrKeyExists) || !errors.Is(missing.err, storage.ErrNotFound) {
		t.Errorf("dup: %v, missing: %v", dup.err, missing.err)
	}
	for i, r := range creates {
		if r.err != nil || r.rev != int64(6+i) {
			t.Errorf("create k%d = %d, %v; want %d", i, r.rev, r.err, 6+i)
		}
	}
	if rev, _ := s.CurrentRevision(t.Context()); rev != 13 {
		t.Fatalf("current revision %d, want 13", rev)
	}
	// Watchers see the batch in revision order, with the delete's value.
	var evs []storage.Event
	for len(evs) < 13 {
		resp := <-w.Responses()
		evs = append(evs, resp.Events...)
	}
	for i, e := range evs {
		if e.Revision != int64(i+1) {
			t.Fatalf("event %d at revision %d", i, e.Revision)
		}
	}
	if e := evs[3]; e.Type != storage.EventDelete || string(e.PrevValue) != "x2" {
		t.Fatalf("delete event %+v", e)
	}
}

func TestCommitFailureAppliesNothing(t *testing.T) {
	s, g := newGated(t, mvcc.Options{})
	w, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	injected := errors.New("injected commit failure")
	release := holdCommit(t, s, g, "first", nil)
	g.failNext(injected) // applies to the batch after the held commit
	b := &batcher{t: t, s: s}
	b.create("a", "a")
	b.update("first", "f2", 1)
	b.update("first", "f", 99)
	b.delete("first", 0)
	if r := release(); r.err != nil || r.rev != 1 {
		t.Fatalf("first write = %d, %v", r.rev, r.err)
	}
	b.wg.Wait()
	for i, r := range b.results {
		if !errors.Is(r.err, injected) {
			t.Errorf("op %d of the failed batch: %d, %v", i, r.rev, r.err)
		}
	}
	ctx := t.Context()
	if rev, _ := s.CurrentRevision(ctx); rev != 1 {
		t.Fatalf("failed commit moved the revision to %d", rev)
	}
	if _, err := s.Get(ctx, "a"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a key of the failed batch: %v", err)
	}
	if kv, err := s.Get(ctx, "first"); err != nil || kv.ModRevision != 1 {
		t.Fatalf("Get first = %+v, %v", kv, err)
	}
	if n, _ := s.Count(ctx, ""); n != 1 {
		t.Fatalf("Count = %d after a failed commit", n)
	}
	// The store carries on from the last durable revision.
	if rev, err := s.Create(ctx, "a", []byte("a")); err != nil || rev != 2 {
		t.Fatalf("Create after the failure = %d, %v; want 2", rev, err)
	}
	for _, want := range []string{"first", "a"} {
		resp := <-w.Responses()
		if len(resp.Events) != 1 || resp.Events[0].Key != want {
			t.Fatalf("watch got %+v, want one event on %s", resp, want)
		}
	}
}

func TestWriteWithEndedContext(t *testing.T) {
	s, g := newGated(t, mvcc.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Create(ctx, "k", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with a cancelled context: %v", err)
	}
	// A write whose context ends while it is queued is dropped.
	release := holdCommit(t, s, g, "first", nil)
	ctx, cancel = context.WithCancel(t.Context())
	b := &batcher{t: t, s: s}
	r := b.add(func() (int64, storage.KeyValue, error) {
		rev, err := s.Create(ctx, "k", nil)
		return rev, storage.KeyValue{}, err
	})
	cancel()
	release()
	b.wg.Wait()
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("queued write with a cancelled context: %d, %v", r.rev, r.err)
	}
	if rev, _ := s.CurrentRevision(t.Context()); rev != 1 {
		t.Fatalf("revision %d, want 1", rev)
	}
}

func TestInvalidKeys(t *testing.T) {
	s, _ := newGated(t, mvcc.Options{})
	ctx := t.Context()
	for _, key := range []string{"", "a\x00b"} {
		if _, err := s.Create(ctx, key, nil); !errors.Is(err, mvcc.ErrInvalidKey) {
			t.Errorf("Create(%q): %v", key, err)
		}
		if _, err := s.Get(ctx, key); !errors.Is(err, mvcc.ErrInvalidKey) {
			t.Errorf("Get(%q): %v", key, err)
		}
	}
	if _, err := s.Create(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.List(ctx, "a\x00", storage.ListOptions{})
	if err != nil || len(res.KVs) != 0 {
		t.Fatalf("List of a NUL prefix = %+v, %v", res, err)
	}
}

func TestWatchBufferBound(t *testing.T) {
	s, _ := newGated(t, mvcc.Options{WatchBuffer: 5})
	full, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	over, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := s.Create(t.Context(), fmt.Sprintf("k%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Both hold exactly the limit; reading one makes room in it.
	for i := 0; i < 5; {
		i += len((<-full.Responses()).Events)
	}
	if _, err := s.Create(t.Context(), "k5", nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	for resp := range over.Responses() {
		n += len(resp.Events)
	}
	if !errors.Is(over.Err(), storage.ErrWatcherTooSlow) || n > 5 {
		t.Fatalf("watcher over its buffer: %d events, err %v", n, over.Err())
	}
	if resp := <-full.Responses(); len(resp.Events) != 1 || resp.Events[0].Key != "k5" {
		t.Fatalf("watcher within its buffer got %+v", resp)
	}
	full.Stop()
}
