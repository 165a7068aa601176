package job

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// statusWrites remembers, per Job key, the resourceVersions that this
// controller's own status writes replaced, until the Job informer shows a
// version that is not one of them.
//
// A sync writes the status (the counters, completedIndexes) before it
// removes pod finalizers. The pod informer can show a finalizer gone while
// the Job informer still holds the Job as it was before the write; a sync
// then would find a finished pod neither in the status nor carrying the
// finalizer, and (for an Indexed Job) create its index again
// (kubernetes/kubernetes#130103). The status write was preconditioned on
// the version the sync read, so nobody wrote in between: while the cached
// version is one the controller's writes replaced, the cache is behind,
// and the sync waits for the Job's update event.
type statusWrites struct {
	mu sync.Mutex
	// replaced holds, per key, the versions replaced by writes whose
	// result the informer has not yet shown.
	replaced map[string]sets.Set[string]
}

func newStatusWrites() *statusWrites {
	return &statusWrites{replaced: map[string]sets.Set[string]{}}
}

// wrote records that a write replaced the version base of key's Job.
func (w *statusWrites) wrote(key, base string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.replaced[key]
	if s == nil {
		s = sets.New[string]()
		w.replaced[key] = s
	}
	s.Insert(base)
}

// stale reports whether cached, the version the informer holds, is one a
// write replaced. Any other version means the informer has caught up
// (events arrive in order), and key's record is dropped.
func (w *statusWrites) stale(key, cached string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.replaced[key]
	if s.Has(cached) {
		return true
	}
	delete(w.replaced, key)
	return false
}

// forget drops key's record (the Job is gone).
func (w *statusWrites) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.replaced, key)
}
