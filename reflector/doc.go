// Package reflector keeps a local copy of one API collection in step with
// the server: it lists the collection, hands the result to a Sink, then
// watches for changes from the list's resourceVersion and hands each
// change to the Sink, in the server's order. It is the bottom layer of an
// informer (package informer): the Sink is normally a *cache.Queue, whose
// consumer maintains the indexed store and calls the event handlers.
//
// # The loop
//
// Run repeats, until its context ends:
//
//  1. Obtain the whole state, either as a streaming list or as a paginated
//     list, and give it to the sink with one Replace(items, rv).
//  2. Watch from rv with bookmarks. Every ADDED, MODIFIED or DELETED event
//     becomes Add, Update or Delete on the sink; every event and bookmark
//     advances LastSyncResourceVersion.
//  3. When a watch ends (the server's timeout, a dropped connection, a
//     transient error), open a new one from LastSyncResourceVersion. No
//     relist happens, so nothing is lost and nothing is delivered twice.
//  4. When the server says that version is gone (410 Gone / Expired, as the
//     answer to the watch request or as an ERROR event in the stream), back
//     off and go to 1.
//
// Failures of a list or of a watch request back off before the retry:
// exponential from 800ms, doubling to a 30s base, with up to 100% jitter
// (client-go's values; see Backoff). After two minutes without needing a
// backoff the sequence restarts from 800ms. The wait runs on
// Options.Clock, so tests drive it with a fake clock. A watch that ends in
// under a second without any event counts as a failure. Unreachable,
// overloaded (429) or failing (5xx) servers make the reflector re-open the
// watch at the same version; client errors (403 Forbidden, 404 NotFound,
// 400) end the watch phase and lead to a relist after the backoff.
//
// # resourceVersion rules
//
// The first list asks for resourceVersion "0": any recent state, which a
// server with a watch cache answers from memory without touching storage.
// A relist asks for the last synced version (a state not older than what
// the sink already holds). If the server answers that this version is
// unavailable (410, an expired continue token during paging, or "Too
// large resource version"), the reflector lists again at once with
// resourceVersion "": the newest state, read consistently.
//
// Lists are paginated with Limit = Options.PageSize (default 500) and the
// continue token of each page. Kubernetes (and setpoint's server) answers
// a list at "0" whole from its watch cache, ignoring the limit; the
// reflector notes that, and relists at a specific version without a limit
// too, so that the cache answers them rather than storage (a limit would
// turn the read into an exact one). When Options.PageSize is set
// explicitly, every list is paginated.
//
// # Streaming lists
//
// Unless Options.WatchList is false, step 1 is first tried as a streaming
// list: one watch with sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true from the
// last synced version ("" at first: a consistent start). The server sends
// the current objects as ADDED events, which are collected, then a
// BOOKMARK annotated "k8s.io/initial-events-end": "true" whose
// resourceVersion is the state's; the collected objects go to the sink
// with Replace at that version, and the same watch then carries the live
// events. A server that rejects the parameters (400 Bad Request or 422
// Invalid, as servers without the feature do) switches the reflector to
// paginated lists for the rest of its life. Streaming needs no extra
// memory on the server for the whole list and costs one request.
//
// # Calling protocol
//
// Build with New, then call Run once, in its own goroutine; it returns
// after the context ends and every request it opened has been closed. The
// sink is called only from Run's goroutine, in order: Replace first, then
// events, another Replace after every relist. A Replace error fails the
// list (backoff, then a new list); an error from Add, Update or Delete is
// logged and the event skipped, since relisting would hit the same object
// again. LastSyncResourceVersion and LastError may be called from any
// goroutine at any time; LastError reports the last list or watch failure
// (for example forbidden or not found, wrapped with what was being
// done) and returns nil again once a list or watch succeeds, which makes
// it the answer to "why has this cache not synced".
package reflector
