// Package workqueue is the queue between a controller's event handlers and
// its workers. Handlers Add the key of every object that changed; workers
// take keys out with Get, reconcile, and report with Done. The queue owns
// three guarantees that make this safe with many handlers and workers:
//
//   - De-duplication: an item that is queued is queued once, however many
//     times it is added. Ten events for one object before a worker gets to it
//     cost one reconcile.
//   - Exclusion: an item is never handed to two workers at once. An item
//     added while a worker holds it is marked dirty and queued again when the
//     worker calls Done, so the change is never lost and never processed
//     concurrently.
//   - Fairness: ready items are handed out FIFO within a priority, higher
//     priorities first (see AddOpts).
//
// # Protocol
//
// A worker loops:
//
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		err := reconcile(key)
//		if err == nil {
//			q.Forget(key) // success: reset the key's backoff
//		} else {
//			q.AddRateLimited(key) // failure: retry after a backoff
//		}
//		q.Done(key) // always, exactly once per Get
//	}
//
// Every item returned by Get must be passed to Done exactly once, or the item
// stays "processing" forever and later adds of it never reach a worker.
// Forget only clears the rate limiter's memory of failures; it neither adds
// nor removes the item. Call it after success so the next failure starts
// again at the smallest backoff.
//
// # Shutting down
//
// ShutDown stops accepting adds (they are silently dropped) and wakes all
// workers; Get keeps returning the items already queued and reports
// shutdown=true once none remain. ShutDownWithDrain does the same and also
// waits until every item handed out has been marked Done, so a process can
// stop after in-flight work finished. Both stop the queue's goroutines before
// returning; pending delayed adds are dropped.
//
// # Delays, rate limits and priorities
//
// AddAfter adds an item once a duration has passed on the queue's clock
// (Config.Clock; tests inject k8s.io/utils/clock/testing's fake clock and
// never sleep). An item delayed twice becomes ready at the earlier time.
// RateLimitingQueue turns a RateLimiter's verdict into such a delay:
// DefaultControllerRateLimiter backs off each item exponentially (5ms,
// 10ms, 20ms, ... up to 1000s) and all items together to 10 per second with
// bursts of 100.
//
// AddWithOpts(AddOpts{Priority: p}, item) queues with priority p (default 0).
// Informer-driven controllers should add initial-list and resync events at
// LowPriority (-100) so that a fresh change made by a user overtakes a
// backlog of thousands of unchanged objects. Re-adding a queued item at a
// higher priority raises it; a lower priority never demotes it.
//
// # Metrics
//
// A named queue (Config.Name) with a Config.MetricsProvider records depth,
// adds, queue and work durations, unfinished work and retries.
// PrometheusMetricsProvider exports them under the names client-go uses
// (workqueue_depth, workqueue_adds_total, ...) labelled by queue name, on a
// prometheus.Registerer the caller chooses. Without a provider the queue
// records nothing and never reads the clock on the hot path.
//
// # Cost
//
// Without metrics, Add only appends the item to a small intake buffer under
// a lock of its own; the next Get, Done, Len or full buffer applies the
// buffered adds, in order, under the queue's lock. Producers therefore rarely
// contend with workers, and nothing a caller can observe changes: every
// operation applies the buffer before it looks at the queue. A fresh
// ExponentialRateLimiter given to NewRateLimiting (alone or inside a
// MaxOfRateLimiter, as in DefaultControllerRateLimiter) keeps its per-item
// failure counts in the queue's own per-item records instead of a map and
// lock of its own; a retry without delay and a Forget then also only append
// to the intake. Other limiters are consulted through RateLimiter as usual.
package workqueue
