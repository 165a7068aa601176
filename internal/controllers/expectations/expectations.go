package expectations

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// TTL is how long an unfulfilled record holds a controller back.
const TTL = 5 * time.Minute

// record is what one controller key is waiting for.
type record struct {
	// add and del are the creations and deletions still to be observed;
	// <= 0 means none outstanding.
	add, del int64
	// setAt is when the record was last Set; the TTL runs from it.
	setAt time.Time
}

// Expectations is Kubernetes' ControllerExpectations: counts of pending
// creations and deletions per controller key.
type Expectations struct {
	clock clock.PassiveClock
	// mu guards records.
	mu      sync.Mutex
	records map[string]*record
}

// New returns empty Expectations on clk (nil: the real clock).
func New(clk clock.PassiveClock) *Expectations {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Expectations{clock: clk, records: map[string]*record{}}
}

// Get returns the outstanding adds and deletes of key, and whether a
// record exists.
func (e *Expectations) Get(key string) (add, del int64, exists bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	if !ok {
		return 0, 0, false
	}
	return r.add, r.del, true
}

// SatisfiedExpectations reports whether the controller of key may act:
// no record, nothing outstanding, or the record expired.
func (e *Expectations) SatisfiedExpectations(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	if !ok {
		return true
	}
	return (r.add <= 0 && r.del <= 0) || e.clock.Since(r.setAt) > TTL
}

// SetExpectations replaces key's record with add creations and del
// deletions outstanding, and restarts its TTL.
func (e *Expectations) SetExpectations(key string, add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records[key] = &record{add: int64(add), del: int64(del), setAt: e.clock.Now()}
}

// ExpectCreations is SetExpectations(key, n, 0).
func (e *Expectations) ExpectCreations(key string, n int) { e.SetExpectations(key, n, 0) }

// ExpectDeletions is SetExpectations(key, 0, n).
func (e *Expectations) ExpectDeletions(key string, n int) { e.SetExpectations(key, 0, n) }

// RaiseExpectations adds to key's outstanding counts, if it has a record.
func (e *Expectations) RaiseExpectations(key string, add, del int) {
	e.change(key, int64(add), int64(del))
}

// LowerExpectations subtracts from key's outstanding counts, if it has a
// record.
func (e *Expectations) LowerExpectations(key string, add, del int) {
	e.change(key, -int64(add), -int64(del))
}

// CreationObserved records that one expected creation happened (or will
// never happen because the write failed).
func (e *Expectations) CreationObserved(key string) { e.change(key, -1, 0) }

// DeletionObserved records that one expected deletion happened (or will
// never happen because the write failed).
func (e *Expectations) DeletionObserved(key string) { e.change(key, 0, -1) }

// DeleteExpectations forgets key's record.
func (e *Expectations) DeleteExpectations(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}

func (e *Expectations) change(key string, add, del int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok {
		r.add += add
		r.del += del
	}
}

// UIDTracking is Expectations whose deletions are tracked by the keys (or
// UIDs) of the objects being deleted, as Kubernetes'
// UIDTrackingControllerExpectations.
type UIDTracking struct {
	*Expectations
	// mu guards pending.
	mu sync.Mutex
	// pending holds, per controller key, the object keys whose deletion is
	// still to be observed; a key leaves the set when observed.
	pending map[string]sets.Set[string]
}

// NewUIDTracking returns empty UIDTracking expectations on clk.
func NewUIDTracking(clk clock.PassiveClock) *UIDTracking {
	return &UIDTracking{Expectations: New(clk), pending: map[string]sets.Set[string]{}}
}

// ExpectDeletions records that the objects with keys deleted are about to
// be deleted by the controller of key, replacing earlier expectations.
func (u *UIDTracking) ExpectDeletions(key string, deleted []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pending[key] = sets.New(deleted...)
	u.Expectations.SetExpectations(key, 0, len(deleted))
}

// DeletionObserved records that the object objKey is gone (or will not go,
// because its delete failed). Only a pending key lowers the count.
func (u *UIDTracking) DeletionObserved(key, objKey string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.pending[key]
	if !s.Has(objKey) {
		return
	}
	s.Delete(objKey)
	u.Expectations.DeletionObserved(key)
}

// PendingDeletions returns the object keys still expected to be deleted
// for key.
func (u *UIDTracking) PendingDeletions(key string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return sets.List(u.pending[key])
}

// DeleteExpectations forgets key's counts and pending keys.
func (u *UIDTracking) DeleteExpectations(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.pending, key)
	u.Expectations.DeleteExpectations(key)
}
