// Package apiserver serves the Kubernetes REST API over HTTPS: discovery,
// OpenAPI, and get/list/watch/create/update/patch/delete on every resource
// of the registry, backed by the object layer (package objects) and one
// watch cache per resource (package watchcache).
//
// The path of a write:
//
//	HTTP request -> authentication (bearer token) -> impersonation ->
//	in-flight limit -> authorization -> route (requestinfo.go) -> decode body (decode.go) -> objects.Store
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
// Aggregation (aggregation.go, package aggregator): a request under
// /apis/<group>/<version> of an APIService with a service, for a
// group-version the server does not serve itself, is authenticated,
// audited and authorized here, then proxied to the service with the
// front-proxy client certificate (Config.ProxyClientCertFile) and the
// user in X-Remote-* headers; discovery and OpenAPI list the aggregated
// group-versions. Front-proxy requests to this server are authenticated
// by Config.RequestHeader (requestheader.go), whose settings, with the
// client CA, are published in kube-system/extension-apiserver-authentication
// at every start.
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
// Filters, outermost first: the audit ID (every response carries
// Audit-Id: the client's Audit-ID header or a new UUID), panic recovery,
// authentication, audit (audit.go: with Config.Audit, the policy of
// package audit is evaluated on the request's attributes as the
// authenticated user, and the events of its stages are written; a refused
// authentication is recorded once, at ResponseStarted), impersonation,
// priority and fairness (or the in-flight limit), authorization, then the
// routes. The handlers record request bodies (decoded
// objects with their defaults, patches, DeleteOptions) and every object or
// Status they answer in the request's audit event.
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
//
// Authentication (filters.go, serviceaccounts.go, legacytokens.go): a
// static token, a service-account token (bound tokens of the TokenRequest
// API, checked against the objects they name with one minute of leeway;
// legacy tokens of token Secrets, which must still hold them), or a client
// certificate of the cluster CA. TokenReview asks the same code with its
// audiences and reports kube-apiserver's refusal messages. The
// service-account issuer discovery documents (oidc.go) are served as
// kube-apiserver serves them, to authenticated users.
//
// Impersonation (impersonation.go, impersonation_modes.go): the
// Impersonate-* headers replace the request's user when the authorizer
// allows it, as kube-apiserver v1.37 decides it with constrained
// impersonation (its modes, then the legacy impersonate verb).
//
// Authorization (authorization.go, authorizers.go): every request that
// carries a user is described as kube-apiserver's RequestInfo describes it
// (verb, API group, resource, subresource, namespace, name; or the path
// and lower-case method of a non-resource request) and asked of the
// server's authorizer: members of system:masters first, then the
// --authorization-mode list (Config.AuthorizationModes: AlwaysAllow,
// AlwaysDeny, RBAC; RBAC by default). A request nothing allows gets
// kube-apiserver's 403 Status (`pods "x" is forbidden: User "u" cannot get
// resource "pods/log" in API group "" in the namespace "ns"`, then ": " and
// the authorizers' reasons); an authorizer error without an allow is a
// 500. The RBAC authorizer (package authorizer/rbac) is fed in process from
// the watch caches of the four RBAC resources; the server is ready once it
// has their first lists.
package apiserver
