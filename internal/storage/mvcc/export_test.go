package mvcc

// QueuedWrites reports how many writes wait for the committer, so that tests
// can line up a batch deterministically.
func QueuedWrites(s *Store) int { return len(s.ops) }
