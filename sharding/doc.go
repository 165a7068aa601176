// Package sharding spreads the work of one controller over N replicas: the
// keys of reconcile requests are hashed into S virtual shards, each shard is
// owned through its own coordination.k8s.io/v1 Lease, and every replica aims
// at its fair share ceil(S/alive) of them. When a replica dies its shards'
// Leases expire and the others take them; when one joins the others release
// their extras to it.
//
// # What the package owns
//
// A Sharder (New, then Start once, usually as a manager runnable that runs
// on every replica) owns, for its group Options.Name:
//
//   - the shard Leases it holds, Namespace/<Name>-shard-<i> for i in [0,S);
//   - its membership Lease Namespace/<Name>-member-<hash of identity>,
//     renewed each round, from which replicas count the live peers;
//   - per shard: a state (free, active, draining), the Lease as it last
//     wrote it, the renew deadline of its last write, and the number of
//     reconciles in flight.
//
// Every Lease carries the labels GroupLabel=<Name> and RoleLabel
// (shard|member); a round reads them with one LIST.
//
// # Hashing
//
// A request's shard is ShardOf(Key(req), S): FNV-1a 32 of the key modulo S.
// The default key, NamespaceKey, is the namespace (all objects of a
// namespace are in one shard, so controllers that read across a namespace —
// a Deployment and its ReplicaSets and pods — see them owned together) and
// the name for cluster-scoped objects. A request carries no uid, so uids
// cannot be the key of the reconcile-time check; a custom Key may hash
// namespace/name. All replicas of a group must agree on S and Key.
//
// # Protocol (one round every RetryPeriod, jittered)
//
//  1. Free every shard whose renew deadline passed (see below).
//  2. List the group's Leases. Note, on this replica's clock, when each
//     Lease's resourceVersion was first seen: as in package leaderelection,
//     a Lease is expired when it has not changed for its
//     leaseDurationSeconds since then; remote renewTimes are never compared
//     with the local clock.
//  3. Renew (or create) the membership Lease. alive = 1 + the other
//     members' Leases that are held and not expired; fair = ceil(S/alive).
//  4. Renew every held shard (active or draining) under its
//     resourceVersion. Success moves its renew deadline to send time +
//     RenewDeadline; a Conflict or NotFound (someone else wrote it) frees it
//     at once; other errors keep it until its deadline. An active shard
//     whose renewal succeeded after its deadline had passed is regained:
//     the OnAcquire hooks are called with it, as with a new shard.
//  5. Release the draining shards with no reconcile in flight: write the
//     Lease free (holder "", 1 s) and forget it.
//  6. Holding more active shards than fair, move the extras (those this
//     replica's rendezvous weight ranks lowest) to draining; holding fewer,
//     take free or expired shard Leases (highest weight first) under their
//     resourceVersion, then call the OnAcquire hooks with the new shards.
//
// On Start's end the Sharder stops admitting, waits for in-flight reconciles
// (each up to its shard's deadline), releases the shards that drained and
// its membership, so peers take over at their next round.
//
// # Integration with a controller
//
//	s, _ := sharding.New(sharding.Options{Client: mgr.Client(), Name: "my-controller"})
//	mgr.Add(s)                                              // runs on every replica
//	c, _ := controller.New("x", s.Reconciler(r), opts)      // reconcile-time gate
//	c.Watch(s.Source(controller.Kind(inf, "v1 things", h))) // enqueue filter
//	s.Resync(c.Queue(), listAllRequestsFromTheCache)        // re-enqueue on acquire
//	mgr.Add(sharding.EveryReplica(c))                        // not only on the leader
//
// # Invariants
//
//   - At most one replica reconciles a given key at a time. The gate
//     (Reconciler) admits a request only while its shard is active and
//     before the shard's renew deadline, counts it in flight, and gives it
//     a context that ends at that deadline or when the shard is lost. A
//     shard is released (written free) only after its count fell to zero,
//     and a shard that was not released is taken by another replica only
//     after its Lease went unchanged for leaseDuration on that replica's
//     clock. With S the send time of the holder's last successful write,
//     the holder admits nothing after S+RenewDeadline, and another replica
//     takes over no earlier than S+LeaseDuration: the gap
//     LeaseDuration-RenewDeadline must cover how long a reconcile takes to
//     return once its context ended and any clock-rate difference
//     (New requires RenewDeadline < LeaseDuration, and leaseDurationSeconds
//     is written rounded up). Every Lease write carries the resourceVersion
//     read, so of two replicas racing for a shard one gets a Conflict.
//   - No key stays unowned: every replica aims at ceil(S/alive) shards, so
//     the live replicas' shares cover S; a dead replica's shards expire
//     after leaseDuration (its membership too, which raises the others'
//     share) and are taken at the next round of a peer with room.
//   - No key stays unreconciled after an ownership change: a shard's
//     events are dropped by the enqueue filter, and its requests by the
//     gate, only while this replica does not admit it, and the replica that
//     admits it next calls its Resync hook, which enqueues every object of
//     the shard from the informer cache (which already holds every event
//     the filter dropped). That replica may be this one: a shard whose
//     renew deadline passed before a late renewal succeeded never changed
//     hands, so the renewal, not a peer's acquisition, resyncs it.
//   - A reconcile longer than RenewDeadline sees its context end even if
//     the shard was renewed meanwhile (its deadline is fixed at admission);
//     the controller retries it.
//
// Time comes from Options.Clock; the per-reconcile deadline and the drain
// wait on shutdown use real time.
package sharding
