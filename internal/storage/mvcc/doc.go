// Package mvcc is the revisioned storage engine behind the memory and
// boltdb stores: it implements storage.Store over any ordered byte-key
// Backend (snapshot reads with cursors, atomic durable write
// transactions). It owns the on-backend layout, the revision counter, the
// group committer and the watch hub.
//
// # Layout
//
// One ordered keyspace, split by a leading byte:
//
//	'k' userKey 0x00 be64(^rev)  -> record{flags, uvarint createRev, value}
//	'l' be64(rev)                -> userKey
//	'm' "current"                -> be64(revision of the last commit)
//	'm' "compacted"              -> be64(compacted revision)
//
// The 'k' entries are the key history (one per mutation; a delete writes a
// tombstone record). Revisions are stored bit-inverted, so a key's entries
// run newest first: the newest entry <= r is the first one at or after
// 'k' key 0x00 be64(^r), a single seek. List at revision r visits each
// user key once (seek to its entry for r, then step or seek past the key),
// so its cost does not grow with the key's history. Because 0x00 ends the
// user key, keys may not contain NUL (ErrInvalidKey), and the index sorts
// exactly like the user keys. The 'l' entries are the revision log that a
// watch replays: revision -> key, the event being rebuilt from the key's
// index entries (a delete's previous value is the entry below it). A page
// of List with keys after it counts them (Remaining) from the live index,
// in memory, corrected by the keys the log shows changed since r; a commit
// racing the list makes it scan the snapshot instead.
//
// # Invariants
//
//   - Revisions are assigned consecutively by the single committer; the
//     backend's "current" meta always names the last committed revision,
//     written in the same transaction as that revision's entries.
//   - In memory, Store.rev, the live-key index (create and mod revision of
//     every existing key, used for CAS without a disk read, for Count and
//     for a page's Remaining) and hub.rev advance only after the backend
//     committed; a failed commit leaves all three untouched. Store.rev
//     advances under liveMu with the live index. The live index is rebuilt from the
//     backend by New.
//   - Compact(c) leaves, for every key, the entries above c plus the newest
//     entry <= c unless it is a tombstone, and removes log entries <= c.
//     So every read at r >= c and every watch from afterRevision >= c is
//     answered exactly as before, and the history before c is gone.
//
// # Writes: group commit
//
// Create, Update and Delete hand an op to the committer goroutine and wait.
// The committer takes every queued op (up to Options.MaxBatch), decides
// each in order against the live index plus the effects of the earlier ops
// of the same batch (a failed CAS affects only its op), assigns consecutive
// revisions, writes all of them in ONE Backend.Update (one fsync for bolt),
// then updates the live index, publishes the events to the watch hub in
// revision order and only then acknowledges the writers. If the commit
// fails every op of the batch gets the error. Once an op is queued its
// caller waits for the outcome even if its context ends (so an applied
// write is never reported as cancelled); the committer drops an op whose
// context ended before it was decided.
//
// # Watches
//
// A watcher starts at position afterRevision (0: the current revision).
// Its goroutine replays the log from a fresh snapshot in chunks until its
// position reaches hub.rev; it then marks itself synced under the hub's
// lock, and from the very next batch on publish queues the matching events
// on it. No event is missed or repeated across that switch because publish
// advances hub.rev and fills synced watchers under the same lock. Publish
// never blocks: each watcher has a queue bounded by Options.WatchBuffer
// events (counting those handed to the consumer but not yet received); a
// batch that would overflow it ends the watch with
// storage.ErrWatcherTooSlow. RequestProgress is answered, after the queued
// events, with the watcher's position once it reaches the store's revision
// at the time of the request (a batch's revision is current a moment
// before publish queues it, so the answer may wait for that publish). A
// watch ends with a nil error when its context ends or Stop is called,
// with ErrClosed when the store closes, and with a
// *storage.CompactedError if compaction overtakes a replay.
//
// # Choices the contract leaves open
//
//   - Watch with afterRevision above the current revision fails with a
//     *storage.FutureRevisionError.
//   - Update events carry no PrevValue; delete events do.
//   - Event values are shared by every watcher that receives the event:
//     consumers must treat them as read-only. KeyValues returned by reads
//     are private copies.
//   - Close is idempotent (later calls return nil).
package mvcc
