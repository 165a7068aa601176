// Package flowcontrol is API Priority and Fairness (APF): how the API
// server shares its capacity among clients so that one client flooding it
// cannot starve the others, the controllers or leader election. It owns
// the mechanism (classification, seats, fair queuing, rejection, metrics);
// the API server's filter (internal/apiserver/flowcontrol.go) feeds it the
// stored FlowSchemas and PriorityLevelConfigurations and every request.
//
// # Classification
//
// Every request is described by a Request (user, groups, verb, and the
// resource or the non-resource path) and sorted by the FlowSchemas in
// order of matchingPrecedence, ties broken by name: the first schema with
// a rule whose subjects (users, groups, ServiceAccounts; "*" for any) and
// whose resource rule (verbs, API groups, resources or
// "resource/subresource", namespaces or clusterScope for cluster-wide
// requests) or non-resource rule (verbs, paths, "/prefix/*") match wins.
// A schema naming a priority level that does not exist is skipped (it is
// "dangling"). The schema names the request's priority level; its
// distinguisher method (ByUser, ByNamespace, or none) splits the schema's
// requests into flows. The mandatory exempt and catch-all objects apply
// even while their stored copies are missing.
//
// # Seats
//
// The server has ServerConcurrencyLimit seats (kube-apiserver:
// --max-requests-inflight + --max-mutating-requests-inflight). A Limited
// level's nominal seats are ceil(server × its nominalConcurrencyShares /
// the sum of all levels' shares); lendablePercent and
// borrowingLimitPercent give its lower and upper bounds (published as
// metrics). Requests of an Exempt level run at once and are only counted.
// A request occupies one seat, except lists (and watches that send the
// current objects first): one seat per 100 objects of the resource, at
// most 10 (ListSeats). A watch occupies its seat only until it is set up
// (WithWatchInitialized / WatchInitialized), not while it streams.
//
// # Fair queuing
//
// A level that queues has `queues` queues. A flow is hashed (schema name
// and distinguisher) and dealt a hand of handSize queues (shuffle
// sharding: the same hand every time, rarely the same hand as another
// flow); a new request joins the queue of its hand with the least waiting
// work. When the level's seats are all taken and that queue already holds
// queueLengthLimit requests, the request is rejected (queue-full). Seats
// freed go to the queue whose head would finish first in virtual time:
// virtual time R advances at min(seats demanded, limit) / active queues
// per second, each queue's next start time advances by the work of what
// it dispatches (seats × an assumed 3 ms) and is corrected by the real
// service time when the request finishes, so every active queue gets an
// equal share of the seats however many requests its flow sends. A queue
// that becomes active starts at R, or at the earliest start of the active
// queues when those lag behind R (after a request ran far longer than the
// assumed 3 ms, the other active queues are owed that time): a flow that
// sends one request is dispatched after at most one request of each queue
// it ties with, however long the requests before it ran. A level with
// limitResponse Reject has no queues: what does not fit is rejected
// (concurrency-limit). A queued request waits at most its wait limit (a
// quarter of the request timeout, capped at a minute; 15 s for watches),
// then is rejected (time-out); a request whose client goes away is
// cancelled.
//
// # Rejection
//
// A rejected request is answered 429 "Too many requests, please try again
// later." with Retry-After: 1 s, doubled (up to 32 s) while a level keeps
// dropping at least three times that many requests in that many seconds,
// and decreased by one second when it drops fewer. Every classified
// response carries the X-Kubernetes-PF-FlowSchema-UID and
// X-Kubernetes-PF-PriorityLevel-UID headers.
//
// # What differs from kube-apiserver
//
// Each level's limit is its nominal seats: seats are not lent and borrowed
// between levels every 10 s by demand (the lower and upper bounds are
// published but not used). Mutating requests occupy one seat only (no
// extra seats or latency for the watchers their change fans out to). List
// widths count the objects of the whole resource (as kube-apiserver does
// for lists served from its cache) and are capped by the limit parameter.
// Virtual time is a float64 of seat-seconds, not fixed-point. A queue
// that becomes active starts at the earliest start of the lagging active
// queues rather than always at R (start-time fair queuing's
// rule for newcomers; kube-apiserver starts it at R): under a flood whose
// requests sometimes run long (garbage collection, a burst of rejected
// retries, a loaded machine), kube-apiserver's rule makes a second tenant
// wait for the flood's other queues to catch up on the long request's
// time, dozens of the flood's requests; this one, for at most one request
// of each. Long-run shares of backlogged flows are unchanged. Timed-out
// requests leave their queue when their own wait limit ends, not when the
// next request arrives.
package flowcontrol
