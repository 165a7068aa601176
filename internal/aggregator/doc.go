// Package aggregator serves the group-versions of APIService objects that
// name a service, as kube-apiserver's aggregator (kube-aggregator) does:
//
//   - Proxy (proxy.go): a request under /apis/<group>/<version> of such
//     an APIService, already authenticated and authorized by the API
//     server, is forwarded over HTTPS to one endpoint of the service
//     (Resolver), verified with the APIService's caBundle (or not, with
//     insecureSkipTLSVerify) for the name <service>.<namespace>.svc,
//     presenting the front-proxy client certificate and naming the user in
//     X-Remote-User, X-Remote-Uid, X-Remote-Group and X-Remote-Extra-*
//     (the client's Authorization, Impersonate-* and X-Remote-* headers
//     are dropped). Answers stream back as they come (watches). An
//     APIService that is not Available gets 503 "service unavailable", as
//     kube-aggregator answers.
//   - Availability (available.go): the Available condition of every
//     APIService with a service, with kube-aggregator's checks, reasons and
//     messages: ServiceNotFound, ServiceAccessError, ServicePortError,
//     EndpointsNotFound, MissingEndpoints, FailedDiscoveryCheck (five
//     concurrent GETs of /apis/<group>/<version> as system:kube-aggregator
//     in system:masters, 5 s each), Passed. Local APIServices (no service)
//     keep Local, written by their kind (registry/apiregistration).
//   - Discovery (discovery.go): each available backend's aggregated
//     discovery (apidiscovery.k8s.io/v2 of /apis, else the legacy
//     /apis/<group>/<version> document), fetched after each check; an
//     unavailable or failing one is listed with no resources and freshness
//     Stale, as kube-aggregator lists it.
//   - OpenAPI (openapi.go): each available backend's /openapi/v2 document
//     and /openapi/v3 index, fetched after each check.
//
// An APIService for a group-version the server serves itself (Config.Local)
// is not proxied: the built-in resources keep answering (setpoint's
// metrics.k8s.io), while its Available condition is still checked.
//
// The Aggregator runs one loop (Run): a sync lists the APIServices,
// checks each, writes the conditions that changed (status only, through
// the object layer), refreshes the fetched documents and publishes one
// immutable snapshot; it runs every ResyncInterval and whenever Trigger is
// called (the server calls it on every change of APIServices, Services and
// EndpointSlices). Requests read the current snapshot without locks.
package aggregator
