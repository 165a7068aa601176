// Package apiserver serves the Kubernetes REST API over HTTPS: discovery,
// OpenAPI, and get/list/watch/create/update/patch/delete on every resource
// of the registry, backed by the object layer (package objects) and one
// watch cache per resource (package watchcache).
//
// The path of a write:
//
//	HTTP request -> authentication (bearer token) -> in-flight limit ->
//	route (requestinfo.go) -> decode body (decode.go) -> objects.Store
//	(metadata, strategy, validation) -> storage (group commit, fsync) ->
//	storage watch -> watchcache (decode once, serialize once) -> every
//	watcher whose selectors match -> informers -> reconcilers.
//
// Warnings: every non-watch request's context carries a recorder
// (k8s.io/apiserver/pkg/warning) whose warnings become Warning headers,
// each text once; custom-resource validation records ratcheted CEL rule
// failures there, as Kubernetes does.
//
// Reads: a consistent list (resourceVersion "") asks storage for its current
// revision and serves from the watch cache once the cache has reached it;
// resourceVersion "0" and NotOlderThan lists are served from the cache;
// paginated and Exact lists read storage at the list's revision. Watches
// are always served by the cache.
//
// Custom resources: the served resources form a table (resources.go) that
// starts with the configured built-in resources and grows and shrinks at
// run time. The CRD controller (crd.go), one per server, watches the
// CustomResourceDefinitions in storage and installs each CRD's served
// versions (package customresource) as entries: their watch caches are
// ready before the entry is published, and discovery, OpenAPI and the
// server-side-apply type converter follow. It writes the CRD's status
// (NamesAccepted, Established, storedVersions); a deleted CRD keeps its
// cleanup finalizer until every object of the resource is gone (creates
// are refused with 405 meanwhile), then stops being served. Several
// servers on one etcd each run the controller; their writes agree.
//
// Limits: request bodies over MaxBodyBytes get 413. API Priority and
// Fairness (flowcontrol.go, package flowcontrol) classifies every request
// by the stored FlowSchemas, queues it fairly among the flows of its
// priority level within MaxReadInFlight + MaxMutatingInFlight seats, and
// answers 429 with Retry-After when its level's queues are full or it
// waits too long; the configuration is kept up to date at start and
// followed live (flowcontrol_config.go). Without it
// (DisablePriorityAndFairness) beyond MaxReadInFlight /
// MaxMutatingInFlight concurrent requests the server answers 429, while
// watches and health checks are never limited. Anonymous requests get 401, except for /healthz, /livez, /readyz
// and /version (what Kubernetes grants system:unauthenticated).
package apiserver
