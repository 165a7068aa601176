// Package watchcache is the per-resource watch cache of the API server: it
// keeps the current objects of one storage prefix in memory, decoded, plus a
// bounded window of recent events, and serves lists and watches from them so
// that N clients watching a resource cost one storage watch, not N.
//
// # What a Cache owns
//
// One Cache serves one storage prefix (one resource). It is fed by exactly
// one storage watch:
//
//  1. Run lists the prefix (page by page, all pages at one revision R) and
//     decodes every value into the current-state tree (sorted by key).
//  2. It then watches the prefix from R. Each storage event is decoded once,
//     applied to the tree, appended to the event window (a ring buffer of
//     Config.WindowCapacity events) and dispatched to the live watchers.
//     Progress notifications advance the cache revision without an event.
//  3. If the storage watch ends with an error, Run watches again from the
//     cache revision; if that history is compacted it lists again. A re-list
//     that moves the revision forward ends every watcher with an Expired
//     error frame (their position is no longer served) and restarts the
//     window at the new revision; clients re-list, as client-go does on 410.
//
// # Invariants
//
//   - Revision() only grows (except when a re-list finds the store behind
//     the cache, which only a restored store can cause). Every event under
//     the prefix with a revision <= Revision() has been applied to the tree.
//   - The window holds every event with a revision in (oldest, Revision()],
//     where oldest is the list revision or the revision of the last event
//     evicted from the ring. A watch from revision N is served iff
//     N >= oldest; older positions get ExpiredError (410 Gone, reason
//     Expired).
//   - A watcher receives events in revision order, each at most once, and
//     exactly those its namespace and selectors admit, with the Kubernetes
//     transition rules: an update that makes an object match is ADDED, one
//     that makes it stop matching is DELETED (carrying the new object), an
//     update that matches before and after is MODIFIED.
//   - A bookmark never carries a revision lower than an event the watcher
//     already received, and the watcher has received every event it admits
//     up to the bookmark's revision.
//   - Dispatch never blocks on a client: sends are non-blocking into a
//     per-watcher queue bounded by the watcher's limit (Config.WatcherBuffer);
//     a watcher whose limit is reached (after a short wait,
//     Config.SlowWatcherWait) is ended with an ERROR frame (Status 410
//     Expired) and removed. That frame may go beyond the limit, so nothing
//     is dropped: the client receives a gap-free prefix of its events, then
//     the ERROR. The queue's memory follows the frames waiting in it, not
//     its limit: an idle watch holds no slot (a server with thousands of
//     watches, most idle, pays for their backlog only).
//
// # Watcher lifecycle
//
// A new watcher whose backlog (initial objects, or window events after its
// revision) fits in half of its limit is filled and registered live at
// once, under the locks, so no event can slip between. Otherwise a catch-up
// goroutine sends the backlog at the client's pace (waiting for room below
// the limit), then follows the window by revision; if the window overruns its position
// it ends with an Expired ERROR frame. It hands the watcher over to live
// dispatch only when nothing is left to send and at most half of its
// limit is in use, so a client that just caught up keeps some slack. Live
// watchers are indexed: one whose field selector requires an exact value of
// a trigger field (metadata.name, and the kind's Config.IndexFields such as
// pods' spec.nodeName) is kept under that value, any other under its
// namespace or with the all-namespace watchers. Dispatch of one event
// visits the all-namespace watchers, those of the event's namespace and,
// per trigger field, those of the new object's value and (for an update
// that changed it) of the old object's value, so a node's watcher still
// sees a pod leave it; it builds no per-watcher data and sends a small
// Frame value.
//   - Every object, event and encoded frame is immutable once published and
//     shared: callers must not mutate what List, Get or Frame.Object return,
//     nor the bytes of Frame.Bytes.
//
// # Serialize once
//
// A Frame is one line of the Kubernetes JSON watch stream,
// {"type":"ADDED","object":{...}}\n. Frames of cached objects and events are
// encoded lazily, on the first Frame.Bytes call, at most once per
// (object state, event type); every watcher that receives that frame gets
// the same byte slice. Bookmarks of one tick are shared too. The protobuf
// watch stream's frame (Frame.ProtoBytes: a 4-byte length, then a
// metav1.WatchEvent in protobuf) is a second form of the same frame, encoded
// once on the first protobuf watcher's call and shared the same way; a
// cache whose kind only JSON watchers ask for never encodes it.
//
// Lists share these encodings: ListItems returns Items whose ListJSON and
// ListProto are the object as an item of a list response (JSON without
// kind and apiVersion, protobuf without the runtime.Unknown envelope),
// located inside the object state's ADDED or MODIFIED frame when that
// frame is encoded. A list reuses a frame already encoded (by a watcher or
// an earlier list) and otherwise encodes the state's ADDED frame, which
// stays with the state for the next list or watcher, as a watcher's frame
// does: memory for encodings grows with the objects listed or watched, not
// with the number of lists.
//
// # Calling protocol
//
// New(cfg) builds a Cache; Run(ctx) runs it until ctx is cancelled (call it
// once, in its own goroutine); WaitReady waits for the first list and the
// storage watch that follows it. List, Get
// and Watch fail with ErrNotReady before that and with ErrStopped after Run
// returned. A consistent read (resourceVersion "") is: read the store's
// CurrentRevision, WaitForRevision(rev), then List. WaitForRevision asks the
// storage watch for a progress notification so an idle prefix catches up,
// and gives up with TooLargeError after Config.ProgressTimeout.
//
// A Watcher's frames (Frames, Next) end when the watch ends: the client's
// Stop or context, the cache stopping, or an ERROR frame (always the last
// frame when present). Err tells why. Every goroutine the package starts
// ends when Run's context is cancelled and Run returns.
package watchcache
