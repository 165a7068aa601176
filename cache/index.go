package cache

import (
	"fmt"
	"slices"
)

// lookup returns the named index. Caller holds mu.
func (s *ThreadSafeIndexer[T]) lookup(indexName string) (*index[T], int, error) {
	i, ok := s.byName[indexName]
	if !ok {
		return nil, 0, fmt.Errorf("cache: index %q does not exist", indexName)
	}
	return s.indexes[i], i, nil
}

// Index implements IndexReader.
func (s *ThreadSafeIndexer[T]) Index(indexName string, obj T) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, _, err := s.lookup(indexName)
	if err != nil {
		return nil, err
	}
	values, err := ix.fn(obj)
	if err != nil {
		return nil, fmt.Errorf("cache: index %q: %w", indexName, err)
	}
	values = dedup(values)
	if len(values) == 1 {
		return s.objects(ix.byValue[values[0]]), nil
	}
	seen := map[string]struct{}{}
	var out []T
	for _, v := range values {
		for key, obj := range ix.byValue[v] {
			if _, dup := seen[key]; !dup {
				seen[key] = struct{}{}
				out = append(out, obj)
			}
		}
	}
	return out, nil
}

// objects returns the objects of one index value's set. Caller holds mu.
func (s *ThreadSafeIndexer[T]) objects(set map[string]T) []T {
	out := make([]T, 0, len(set))
	for _, obj := range set {
		out = append(out, obj)
	}
	return out
}

// ByIndex implements IndexReader.
func (s *ThreadSafeIndexer[T]) ByIndex(indexName, value string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, _, err := s.lookup(indexName)
	if err != nil {
		return nil, err
	}
	return s.objects(ix.byValue[value]), nil
}

// IndexKeys implements IndexReader.
func (s *ThreadSafeIndexer[T]) IndexKeys(indexName, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, _, err := s.lookup(indexName)
	if err != nil {
		return nil, err
	}
	set := ix.byValue[value]
	out := make([]string, 0, len(set))
	for key := range set {
		out = append(out, key)
	}
	return out, nil
}

// ListIndexFuncValues implements IndexReader.
func (s *ThreadSafeIndexer[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, _, err := s.lookup(indexName)
	if err != nil {
		return []string{}
	}
	out := make([]string, 0, len(ix.byValue))
	for v := range ix.byValue {
		out = append(out, v)
	}
	return out
}

// IndexNames returns the installed index names, sorted.
func (s *ThreadSafeIndexer[T]) IndexNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.indexes))
	for _, ix := range s.indexes {
		names = append(names, ix.name)
	}
	slices.Sort(names)
	return names
}

// AddIndexers implements Indexer. Objects already stored are filed in the
// new indexes; if an index function fails on one of them, nothing changes.
func (s *ThreadSafeIndexer[T]) AddIndexers(newIndexers Indexers[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := sortedNames(newIndexers)
	added := make([]*index[T], 0, len(names))
	for _, name := range names {
		if _, dup := s.byName[name]; dup {
			return fmt.Errorf("cache: add indexers: index %q already exists", name)
		}
		added = append(added, &index[T]{name: name, fn: newIndexers[name], byValue: map[string]map[string]T{}})
	}
	// Compute every new value before touching any entry.
	extra := make(map[string][][]string, len(s.items))
	for key, e := range s.items {
		values := make([][]string, len(added))
		if err := computeValues(e.obj, added, values); err != nil {
			return fmt.Errorf("cache: add indexers: indexing %q: %w", key, err)
		}
		extra[key] = values
	}
	for i, ix := range added {
		s.byName[ix.name] = len(s.indexes)
		s.indexes = append(s.indexes, ix)
		for key, values := range extra {
			ix.fileValues(key, s.items[key].obj, values[i])
		}
	}
	for key, e := range s.items {
		e.values = append(e.values, extra[key]...)
	}
	return nil
}
