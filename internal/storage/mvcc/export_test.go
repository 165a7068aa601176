package mvcc

// QueuedWrites reports how many writes wait for the committer, so that tests
// can line up a batch deterministically.
func QueuedWrites(s *Store) int { return len(s.ops) }

// CountAfter returns Remaining for the keys under prefix after the key
// after at rev both ways: from the live index and the log (fast), and by
// scanning the snapshot (scan), which List uses when a commit races it.
func CountAfter(s *Store, prefix, after string, rev int64) (fast, scan int64, err error) {
	err = s.b.View(func(tx ReadTx) error {
		if fast, err = s.countAfter(tx, prefix, after, rev); err != nil {
			return err
		}
		scan, err = countScan(tx, prefix, after, rev)
		return err
	})
	return fast, scan, err
}
