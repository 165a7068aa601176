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
// Reads: a consistent list (resourceVersion "") asks storage for its current
// revision and serves from the watch cache once the cache has reached it;
// resourceVersion "0" and NotOlderThan lists are served from the cache;
// paginated and Exact lists read storage at the list's revision. Watches
// are always served by the cache.
//
// Limits: request bodies over MaxBodyBytes get 413; beyond
// MaxReadInFlight / MaxMutatingInFlight concurrent requests the server
// answers 429 with Retry-After, while watches and health checks are never
// limited. Anonymous requests get 401, except for /healthz, /livez, /readyz
// and /version (what Kubernetes grants system:unauthenticated).
package apiserver
