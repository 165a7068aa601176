package cache

import (
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// entry is one stored object with the index values computed when it was
// stored. Keeping the values (rather than recomputing them from the old
// object on update) means that an object mutated in place by a careless
// reader can never leave stale index entries behind.
type entry[T any] struct {
	obj T
	// values[i] holds the deduplicated values of index i for obj, in the
	// order of ThreadSafeIndexer.indexes.
	values [][]string
	// print is obj's fingerprint when mutation detection is on, else nil.
	print *fingerprint
}

// index is one named secondary index.
type index[T any] struct {
	name string
	fn   IndexFunc[T]
	// byValue maps an index value to the keys filed under it, each with
	// its current object, so that lookups need no second map access.
	// Invariants: no inner map is empty (a value with no keys is removed),
	// and byValue[v][k] is items[k].obj.
	byValue map[string]map[string]T
}

// ThreadSafeIndexer is the in-memory Indexer. All methods are safe for
// concurrent use; reads share a lock, writes are exclusive. Index functions
// and the KeyFunc run while the write lock is held and must not call back
// into the indexer.
type ThreadSafeIndexer[T any] struct {
	keyFunc KeyFunc[T]
	// detector is nil unless mutation detection is enabled; set once at
	// construction.
	detector *mutationDetector[T]

	mu sync.RWMutex
	// items maps key to entry. Invariant (under mu): key k is in
	// indexes[i].byValue[v] exactly when v is in items[k].values[i].
	items map[string]*entry[T]
	// indexes in installation order; entry.values is parallel to it.
	indexes []*index[T]
	// byName maps an index name to its position in indexes.
	byName map[string]int
	// scratch is reused by overwrite to compute index values without
	// allocating; empty between calls so it retains nothing.
	scratch [][]string
}

var _ Indexer[int] = (*ThreadSafeIndexer[int])(nil)

// NewIndexer returns an empty indexer keyed by keyFunc with the given
// indexes installed (indexers may be nil).
func NewIndexer[T any](keyFunc KeyFunc[T], indexers Indexers[T], opts ...Option[T]) *ThreadSafeIndexer[T] {
	o := buildOptions(opts)
	s := &ThreadSafeIndexer[T]{
		keyFunc: keyFunc,
		items:   map[string]*entry[T]{},
		byName:  map[string]int{},
	}
	if o.detect {
		s.detector = &mutationDetector[T]{print: o.fingerprint}
	}
	for _, name := range sortedNames(indexers) {
		s.install(name, indexers[name])
	}
	return s
}

// NewObjectIndexer returns an indexer for Kubernetes objects keyed by
// MetaNamespaceKeyFunc, with NamespaceIndex installed alongside indexers.
func NewObjectIndexer[T metav1.Object](indexers Indexers[T], opts ...Option[T]) *ThreadSafeIndexer[T] {
	all := Indexers[T]{NamespaceIndex: MetaNamespaceIndexFunc[T]}
	for name, fn := range indexers {
		all[name] = fn
	}
	return NewIndexer(MetaNamespaceKeyFunc[T], all, opts...)
}

// NewStore returns a plain store: an indexer with no index.
func NewStore[T any](keyFunc KeyFunc[T], opts ...Option[T]) Store[T] {
	return NewIndexer(keyFunc, nil, opts...)
}

func sortedNames[T any](indexers Indexers[T]) []string {
	names := make([]string, 0, len(indexers))
	for name := range indexers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// install appends an empty index; the caller fills it. Caller holds mu or
// owns s exclusively.
func (s *ThreadSafeIndexer[T]) install(name string, fn IndexFunc[T]) {
	s.byName[name] = len(s.indexes)
	s.indexes = append(s.indexes, &index[T]{name: name, fn: fn, byValue: map[string]map[string]T{}})
}

// computeValues runs the index functions over obj into dst, which is
// parallel to indexes. Caller holds mu.
func computeValues[T any](obj T, indexes []*index[T], dst [][]string) error {
	for i, ix := range indexes {
		vs, err := ix.fn(obj)
		if err != nil {
			return fmt.Errorf("index %q: %w", ix.name, err)
		}
		dst[i] = dedup(vs)
	}
	return nil
}

// dedup returns vs without repeated values, reusing vs when it has none.
func dedup(vs []string) []string {
	if len(vs) < 2 {
		return vs
	}
	if len(vs) == 2 {
		if vs[0] == vs[1] {
			return vs[:1]
		}
		return vs
	}
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}

// fingerprint digests obj when mutation detection is on; nil otherwise.
func (s *ThreadSafeIndexer[T]) fingerprint(key string, obj T) (*fingerprint, error) {
	if s.detector == nil {
		return nil, nil
	}
	fp, err := s.detector.print(obj)
	if err != nil {
		return nil, fmt.Errorf("fingerprinting %q: %w", key, err)
	}
	return (*fingerprint)(&fp), nil
}

// newEntry computes everything stored for obj under key. Caller holds mu.
func (s *ThreadSafeIndexer[T]) newEntry(key string, obj T) (*entry[T], error) {
	values := make([][]string, len(s.indexes))
	if err := computeValues(obj, s.indexes, values); err != nil {
		return nil, fmt.Errorf("indexing %q: %w", key, err)
	}
	print, err := s.fingerprint(key, obj)
	if err != nil {
		return nil, err
	}
	return &entry[T]{obj: obj, values: values, print: print}, nil
}

// Add implements Writer.
func (s *ThreadSafeIndexer[T]) Add(obj T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, err := s.keyFunc(obj)
	if err != nil {
		return fmt.Errorf("cache: add: computing key: %w", err)
	}
	if old, ok := s.items[key]; ok {
		if err := s.overwrite(key, old, obj); err != nil {
			return fmt.Errorf("cache: add: %w", err)
		}
		return nil
	}
	e, err := s.newEntry(key, obj)
	if err != nil {
		return fmt.Errorf("cache: add: %w", err)
	}
	s.items[key] = e
	s.file(key, e)
	return nil
}

// overwrite stores obj in the existing entry old, computing the new index
// values in scratch space first so that a failure changes nothing and a
// success allocates no new entry. Index entries whose values did not change
// are overwritten in place. Caller holds mu.
func (s *ThreadSafeIndexer[T]) overwrite(key string, old *entry[T], obj T) error {
	if cap(s.scratch) < len(s.indexes) {
		s.scratch = make([][]string, len(s.indexes))
	}
	values := s.scratch[:len(s.indexes)]
	defer clear(values)
	if err := computeValues(obj, s.indexes, values); err != nil {
		return fmt.Errorf("indexing %q: %w", key, err)
	}
	print, err := s.fingerprint(key, obj)
	if err != nil {
		return err
	}
	for i, ix := range s.indexes {
		if !slices.Equal(old.values[i], values[i]) {
			ix.unfileValues(key, old.values[i])
		}
		ix.fileValues(key, obj, values[i])
	}
	copy(old.values, values)
	old.obj, old.print = obj, print
	return nil
}

// Update implements Writer.
func (s *ThreadSafeIndexer[T]) Update(obj T) error { return s.Add(obj) }

// Delete implements Writer.
func (s *ThreadSafeIndexer[T]) Delete(obj T) error {
	key, err := s.keyFunc(obj)
	if err != nil {
		return fmt.Errorf("cache: delete: computing key: %w", err)
	}
	s.DeleteByKey(key)
	return nil
}

// DeleteByKey removes the object stored under key, if any.
func (s *ThreadSafeIndexer[T]) DeleteByKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.items[key]; ok {
		s.unfile(key, old)
		delete(s.items, key)
	}
}

// file adds key to every index under e's values. Caller holds mu.
func (s *ThreadSafeIndexer[T]) file(key string, e *entry[T]) {
	for i, ix := range s.indexes {
		ix.fileValues(key, e.obj, e.values[i])
	}
}

func (ix *index[T]) fileValues(key string, obj T, values []string) {
	for _, v := range values {
		set := ix.byValue[v]
		if set == nil {
			set = map[string]T{}
			ix.byValue[v] = set
		}
		set[key] = obj
	}
}

// unfile removes key from every index under e's values, dropping sets that
// become empty. Caller holds mu.
func (s *ThreadSafeIndexer[T]) unfile(key string, e *entry[T]) {
	for i, ix := range s.indexes {
		ix.unfileValues(key, e.values[i])
	}
}

func (ix *index[T]) unfileValues(key string, values []string) {
	for _, v := range values {
		set := ix.byValue[v]
		delete(set, key)
		if len(set) == 0 {
			delete(ix.byValue, v)
		}
	}
}

// Replace implements Writer. Everything is computed before anything is
// swapped, so a failing key or index function leaves the old content.
func (s *ThreadSafeIndexer[T]) Replace(list []T, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := make(map[string]*entry[T], len(list))
	for _, obj := range list {
		key, err := s.keyFunc(obj)
		if err != nil {
			return fmt.Errorf("cache: replace: computing key: %w", err)
		}
		e, err := s.newEntry(key, obj)
		if err != nil {
			return fmt.Errorf("cache: replace: %w", err)
		}
		items[key] = e
	}
	s.items = items
	for _, ix := range s.indexes {
		ix.byValue = map[string]map[string]T{}
	}
	for key, e := range items {
		s.file(key, e)
	}
	return nil
}

// Get implements Reader.
func (s *ThreadSafeIndexer[T]) Get(obj T) (T, bool, error) {
	key, err := s.keyFunc(obj)
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("cache: get: computing key: %w", err)
	}
	return s.GetByKey(key)
}

// GetByKey implements Reader.
func (s *ThreadSafeIndexer[T]) GetByKey(key string) (T, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.items[key]; ok {
		return e.obj, true, nil
	}
	var zero T
	return zero, false, nil
}

// List implements Reader.
func (s *ThreadSafeIndexer[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.items))
	for _, e := range s.items {
		out = append(out, e.obj)
	}
	return out
}

// ListKeys implements Reader.
func (s *ThreadSafeIndexer[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for key := range s.items {
		out = append(out, key)
	}
	return out
}

// Len returns the number of stored objects.
func (s *ThreadSafeIndexer[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}
