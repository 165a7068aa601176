// Package record records Kubernetes Events (core/v1) about objects, the way
// client-go's tools/record does, in setpoint's own code: a controller calls
// Recorder.Event and goes on; a Broadcaster writes the event to the API
// server in the background, folding repeats into counts and refusing floods.
//
// # Pipeline
//
//	Recorder.Event ──(non-blocking)──▶ bounded queue ──▶ worker: correlate ──▶ Sink (create | patch)
//
// A Recorder builds the Event at once: the involved object reference comes
// from the object's TypeMeta, or from the Broadcaster's Scheme when TypeMeta
// is empty (NewScheme registers the k8s.io/api kinds), plus its name,
// namespace, uid and resourceVersion. The event lives in the object's
// namespace ("default" for cluster-scoped objects) and is named
// <object>.<hex nanoseconds>, unique within a Broadcaster. Only types Normal
// and Warning are accepted. The event is then offered to a queue of
// Options.QueueSize (1000): when the queue is full the event is dropped,
// counted in Stats.Dropped and logged (the 1st, 2nd, 4th, 8th... drop), so
// recording never blocks a controller.
//
// One worker goroutine takes events in order and runs the correlator:
//
//  1. Spam filter: a token bucket per (source, involved object), burst 25,
//     one token earned every 5 minutes. An event without a token is dropped
//     (Stats.Filtered).
//  2. Aggregation: events alike in all but their message (same source,
//     object, type and reason) keep up to 10 distinct messages as separate
//     Events; each further distinct message within 10 minutes of the last
//     similar event goes into a single Event whose message is
//     "(combined from similar events): " plus the latest message.
//  3. Deduplication: an event identical to one already stored (same source,
//     object, type, reason, message — or the same combined Event) patches
//     the stored Event's count (+1), lastTimestamp and message instead of
//     creating a new one; firstTimestamp and name stay.
//
// All three use the injected Options.Clock and bounded LRU caches.
//
// # Writing
//
// The Sink (NewRESTSink over a rest.Client) creates or strategic-merge
// patches. A patch of an Event gone from the server (TTL) creates it again.
// An API error (*apierrors.StatusError) is final; other errors are retried up
// to MaxTries (12) times, RetryInterval (10s) apart, the first retry after a
// random fraction of the interval.
//
// # Lifecycle
//
// NewBroadcaster starts the worker. Flush waits until everything queued
// before it is handled. Shutdown stops accepting events (later ones count
// as dropped), writes what is queued and stops the worker; if its context
// ends first, the write in flight is cancelled and the rest abandoned
// (Stats.Failed). Every Broadcaster must be shut down, or its goroutine
// leaks.
package record
