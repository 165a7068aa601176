// Package informer keeps an in-memory cache of one API collection in step
// with the server and tells event handlers about every change. It is the
// layer controllers read from: they register handlers that enqueue keys,
// and reconcile from the cache, never from the server.
//
// # What an Informer owns
//
// An Informer[T] owns four parts:
//
//   - a reflector (package reflector) that lists and watches the server and
//     feeds the queue; Options.Transform (default StripManagedFields) and
//     then compaction (Options.Compaction, default CompactShare) are
//     applied to every object on the way in;
//   - a cache.Queue, whose known-objects store is the cache;
//   - the cache, a cache.ThreadSafeIndexer with NamespaceIndex and
//     Options.Indexers, read through Indexer() and Lister();
//   - one listener per registered handler: an unbounded buffer and a
//     goroutine that calls the handler.
//
// They are wired in a line:
//
//	reflector -> Transform -> compaction -> Queue -> dispatcher -> cache, then handler buffers -> handlers
//
// Run starts all of them. The dispatcher pops one batch at a time,
// applies it to the cache with cache.Apply, and hands the resulting
// notifications to every listener's buffer. Handing over never waits for a
// handler: a slow handler only grows its own buffer (watch it with
// Metrics), it never delays other handlers, the cache or the reflector.
//
// # Ordering guarantees
//
//   - Store before notification: when a handler hears of a change, the
//     cache already holds it. A relist is stored whole (one Replace) before
//     any of its per-object notifications, so a handler reacting to the
//     first object of a relist already sees the whole list.
//   - Per handler, notifications arrive in the order the server produced
//     the changes, one callback at a time. Different handlers progress
//     independently.
//   - A handler registered while the cache is non-empty first receives the
//     cache content as OnAdd(obj, true), then every later change; it never
//     sees a change before the state it applies to.
//
// # Shared objects
//
// The objects in the cache, in listers' results and in handler callbacks
// are one shared copy. Never modify them: deep-copy first. (The cache
// package's mutation detector catches violations in tests.) A Transform
// may modify its argument, because it runs on objects fresh from the
// decoder, before anybody else sees them.
//
// IMPORTANT: by default cached objects also share parts with EACH OTHER.
// Compaction (CompactShare) makes equal slices, maps and pointed-to values
// of different objects one copy: the pods of a ReplicaSet hold the very same
// Containers slice, Labels map and OwnerReferences. Writing to any part of
// a cached object (pod.Labels["x"] = "y", append into a shared slice's
// spare capacity, setting a field through a pointer) may therefore change
// many cached objects at once, not only the one in hand; DeepCopy returns a
// fully independent object as always. Controllers that follow the rule
// above are unaffected. Set Options.Compaction (FactoryOptions.Compaction)
// to CompactStrings (interned strings only) or CompactNone to opt out.
//
// # Compaction
//
// Compaction runs after Transform, on each added, updated or listed object,
// in the reflector's goroutine. It never changes what an object says: the
// cached object is reflect.DeepEqual to the one Transform returned (nil and
// empty stay distinct; numbers, quantities and times keep their exact
// representation). Each informer has its own compactor, which
//
//   - interns strings: equal strings share their bytes;
//   - trims slices whose capacity exceeds their length;
//   - (CompactShare) replaces each slice, map and pointer by an equal one
//     already cached, found by a hash of its content in which children count
//     by identity: children are compacted first, so equal subtrees have
//     identical children, and an equality check guards against collisions.
//
// A string or sub-object enters the compactor's tables only when it is seen
// a second time (before that only its 64-bit hash is kept), and the tables
// keep at most two generations of a bounded number of entries, dropping
// those not met again; so unique values (names, uids, IPs) are never pinned,
// and memory held for objects already deleted is bounded. Structs with
// unexported fields (resource.Quantity, metav1.Time) are compared and copied
// whole, never modified. On a 100,000-pod list, compaction cuts the heap the
// cache retains by about three quarters and costs tens of microseconds per
// object; see docs/BENCHMARKS.md.
//
// # Synced
//
// Informer.HasSynced turns true once the initial list is in the cache and
// has been handed to every handler. Registration.HasSynced additionally
// waits until its handler has returned from each of those initial
// notifications (for a late handler: each replayed add). Controllers wait
// for the registrations of their handlers (WaitForCacheSync) before
// starting workers.
//
// # Resync
//
// A handler with a resync period (HandlerOptions.ResyncPeriod, default
// Options.ResyncPeriod, 0 = none) gets, every period, the whole cache again
// as OnUpdate(obj, obj) with the same pointer twice. Resync never calls the
// server. A ticker per such handler, on Options.Clock, marks the handler
// due and asks the queue for a ResyncBatch (cache.Queue.Resync). The batch
// goes through the dispatcher like any other, and is handed only to the
// handlers marked due at that moment, which are then unmarked. This keeps
// resyncs in order with live events: the queue builds the batch from the
// cache behind every batch queued before it and leaves out objects with a
// change still queued, so a resync can never hand a handler a state older
// than one it has already been handed, and changes queued after it are
// delivered after it. A handler whose tick produced no batch (empty cache,
// or every object with a change queued) stays due and is served by the
// next ResyncBatch.
//
// # Lifecycle
//
// AddEventHandler works before and during Run and fails with ErrStopped
// after. RemoveEventHandler drops the handler's pending notifications; no
// callback starts afterwards. Run blocks until its context ends, then
// stops the reflector, the dispatcher and every handler goroutine, and
// returns only when all of them have returned (a handler blocked in a
// callback holds Run up). An informer runs once.
//
// # Factory
//
// A Factory builds informers on a rest.Client and shares them: For[T, L]
// and Dynamic return the same *Informer for the same (Go object type,
// resource, namespace, label selector, field selector). Start runs the
// informers not started yet, WaitForCacheSync waits for them, Shutdown
// waits until they have stopped after the Start context ended.
//
// The factory's informers of built-in kinds list and watch in protobuf
// (rest.Resource.PreferProtobuf) unless the client's Config.ContentType was
// set, as client-go's informers do: decoding JSON was about 80% of an
// informer's CPU during an initial sync of pods, and decoding protobuf
// costs about a fifth of that. Dynamic informers and types without a
// protobuf form stay JSON.
//
// # Deviations from the original contract
//
//   - New, For and Dynamic constrain T to Object (metav1.Object and
//     runtime.Object), because reflector.New requires a runtime.Object.
//     Every API pointer type and *unstructured.Unstructured qualify.
//   - Options has a Resource field (the lister's NotFound errors need a
//     GroupResource); the factory fills it.
//   - For and Dynamic take optional Options (InNamespace,
//     WithLabelSelector, WithFieldSelector) that override the factory's
//     defaults for one informer; FactoryOptions has Metrics and a Transform
//     of type func(metav1.Object) (metav1.Object, error).
//   - NewMetrics returns an error as well (registration can fail);
//     Registration has a Name method.
//   - A deletion inferred from a relist whose last state the queue could not
//     recover (a tombstone without object) is logged and not delivered:
//     there is no object to pass to OnDelete.
package informer
