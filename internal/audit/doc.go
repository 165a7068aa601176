// Package audit records what the API server is asked and answers, as
// kube-apiserver's auditing does: an audit policy chooses, request by
// request, how much to record, and a log backend writes the events as JSON
// lines, one audit.k8s.io/v1 Event per line, with rotation.
//
// # Policy
//
// A Policy (policy.go) is kube-apiserver's --audit-policy-file: kind
// Policy, apiVersion audit.k8s.io/v1, YAML or JSON, validated with
// kube-apiserver's messages (unknown fields are tolerated with a warning,
// as its lenient fallback does). Its rules are evaluated in order on the
// request's authorizer.Attributes — user and groups, verb, resource
// (group, resources with the "pods/log", "*/status", "pods/*" forms,
// resourceNames), namespace, non-resource URLs ("*" and trailing "*") —
// and the first match gives the level: None, Metadata (who, what, which
// object, the answer's status), Request (and the request body) or
// RequestResponse (and the response body). No match is None. A rule's
// omitStages add to the policy's; omitManagedFields of a rule overrides
// the policy's.
//
// # Events and stages
//
// Each audited request writes one event per stage: RequestReceived (before
// it is handled), ResponseStarted (long-running requests: watches and
// streams, once their headers are out), ResponseComplete, or Panic. The
// Event type (types.go) has kube-apiserver's JSON field for field; all
// events of a request share its auditID, the Audit-ID header the client
// sent or a new UUID, which the server echoes in the Audit-Id response
// header of every request.
//
// # The per-request API (context.go, objects.go)
//
// The server's outermost filter starts each request's audit state
// (WithRequest); the audit filter, after authentication, evaluates the
// policy (Auditor.Begin) and writes the stages (ProcessStage). Other parts
// of the server add to the request's event through its context:
//
//	audit.AddAnnotation(ctx, key, value)        // one annotation
//	audit.AddAnnotations(ctx, k1, v1, k2, v2)   // several
//	audit.LogImpersonatedUser(ctx, userInfo)    // impersonation
//	audit.IDFrom(ctx), audit.LevelFrom(ctx)     // the request's ID, level
//
// Annotations may be added from any goroutine of the request at any point
// after authentication (before the policy is evaluated they are held and
// joined to the event); they are no-ops outside an audited request. A key
// keeps its first value. Kubernetes' keys: the authorization filter's
// authorization.k8s.io/decision ("allow" or "forbid") and
// authorization.k8s.io/reason, PodSecurity's pod-security.kubernetes.io/*,
// the TokenRequest handler's authentication.kubernetes.io/issued-credential-id.
//
// The handlers record bodies: LogRequestObject (a create's or update's
// decoded object, with its defaults; DeleteOptions), LogRequestPatch and
// LogResponseObject (every object or Status the server sends); they fill
// the object reference from the body where the path did not name it.
//
// # Log backend
//
// An Auditor (auditor.go) writes the events to --audit-log-path ("-" is
// standard output) through lumberjack, rotating at --audit-log-maxsize
// megabytes and keeping --audit-log-maxbackup files for --audit-log-maxage
// days (kube-apiserver's defaults 100, 100 and 366; maxsize 0 appends to
// one file forever). The mode is kube-apiserver's default for the log
// backend, blocking: each event is written before the request goes on, and
// a failed write is logged and counted. blocking-strict refuses (500) a
// request whose RequestReceived event cannot be written; batch queues
// events for a writer goroutine. Close waits for the audited requests in
// flight and the queue, so a clean stop loses no event.
//
// Metrics (registered by the server): apiserver_audit_event_total,
// apiserver_audit_error_total{plugin="log"},
// apiserver_audit_level_total{level},
// apiserver_audit_requests_rejected_total.
//
// The types of k8s.io/apiserver/pkg/apis/audit/v1 are not imported: that
// package is part of k8s.io/apiserver, which stays out of the product; the
// JSON here is the same wire format.
package audit
