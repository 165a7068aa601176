// Package etcd is the scale-out store: storage.Store over an etcd v3
// cluster, reached with etcd's own v3 client (go.etcd.io/etcd/client/v3).
// It owns the mapping of the storage contract onto etcd's key space and
// APIs, and nothing else: etcd owns durability, replication, revisions and
// compaction.
//
// # Mapping
//
//   - Key k is stored as etcd key Options.Prefix+k, so several clusters can
//     share one etcd under different prefixes (they share its revision
//     counter and its compaction, as Kubernetes API servers sharing an etcd
//     do).
//   - A revision is etcd's revision, unchanged: KeyValue.ModRevision and
//     CreateRevision are etcd's mod_revision and create_revision, and the
//     API server's resourceVersion is therefore etcd's revision. An etcd
//     that never saw a write is at revision 1 (etcd's initial revision),
//     not 0.
//   - Create is Txn(create_revision(k) == 0 ? put). Update and Delete are
//     Txn(mod_revision(k) == expected && create_revision(k) > 0 ? write :
//     get), so a failed compare returns the key's current state in the same
//     round trip for the *storage.ConflictError. A write is acknowledged
//     once etcd committed it through raft (a quorum fsynced it).
//   - Reads are linearizable etcd ranges (never serializable): Get, List,
//     Count and CurrentRevision reflect every write acknowledged before the
//     call, whichever member answers. List at a revision is a range with
//     WithRev; pagination is WithLimit plus etcd's More flag.
//   - Watch is an etcd watch from afterRevision+1 with WithPrevKV (delete
//     events carry the deleted value; update events carry it too),
//     WithProgressNotify and WithRequireLeader (a member that loses its
//     leader ends the watch rather than going silent). Each stream has its
//     own gRPC watch stream, so its RequestProgress is etcd's
//     RequestProgress for that stream alone; a request etcd drops (etcd
//     answers only when every watcher of the stream is synced) is re-sent
//     every progressRetry until a notification arrives. The client resumes
//     a watch on another member after a member failure, from the last
//     revision it delivered, without gaps or repeats.
//   - Compact(rev) is etcd's Compact(rev). The compacted revision is not
//     stored by etcd in a readable place, so the store learns it from its
//     own compactions and, when etcd reports a revision compacted that the
//     store did not know of (another API server, etcdctl or etcd's
//     auto-compaction compacted), by a short binary search over revisions
//     with count-only reads.
//
// # Errors
//
// The same typed errors as the embedded stores (internal/storage/mvcc):
// storage.ErrKeyExists, storage.ErrNotFound, *storage.ConflictError,
// *storage.CompactedError (etcd's ErrCompacted; also a watch cancelled by
// compaction), *storage.FutureRevisionError (etcd's ErrFutureRev, and a
// Watch or Compact above the current revision, which etcd itself would
// accept or reject without the current revision), storage.ErrClosed after
// Close, storage.ErrWatcherTooSlow for a consumer that lets more than
// Options.WatchBuffer events queue up. Read and watch revisions below the
// compacted revision fail exactly as in mvcc: a read at the compacted
// revision itself works, a watch from afterRevision == compacted works.
// Other etcd failures (no leader, unreachable cluster, timeouts) are
// returned wrapped; a write that fails that way may or may not have been
// applied, as with any etcd client.
package etcd
