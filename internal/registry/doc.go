// Package registry describes the resources the API server serves: their
// names and kinds, scope, Go types, and the behaviour of each kind, as hooks
// the generic server (package apiserver) calls. Adding a kind means adding a
// Resource (in the package of its API group), never editing the server.
//
// # What a kind says about itself
//
// A Resource is pure description plus behaviour hooks:
//
//   - Strategy (and Status, Scale): the write logic of the object itself,
//     pure functions of the objects involved, no I/O. The calling protocol,
//     as the object layer (package objects) runs it:
//
//     create: Default, [admission], PrepareForCreate, Validate
//     update: PrepareForUpdate, Default, [admission], ValidateUpdate
//     status: Status.PrepareForUpdate, [admission], Status.ValidateUpdate
//
//   - Admit (hooks.go): the kind's own admission, on create and on update,
//     with access to the server (Env): allocation of cluster IPs and node
//     ports, defaults that depend on other objects. It returns a Txn whose
//     Revert gives back what it took when the write does not happen, and
//     whose Commit releases what the old object held. AfterDelete releases
//     what a deleted object held.
//
//   - Subresources: beyond status and scale, each subresource is one of
//     three forms: Update (a view of the object written through its own
//     strategy: namespaces/finalize), Action (a POST that acts on the
//     object: pods/binding, pods/eviction) or Connect (forwarded to a node
//     or pod: pods/log, exec, proxy).
//
//   - Env also authenticates bearer tokens (TokenReview) and holds the
//     server's Authorizer (package authorizer: system:masters, then the
//     --authorization-mode list, RBAC by default).
//
//   - Warnings (hooks.go, WarningsStrategy): what a valid create or update
//     is warned about (deprecated fields), sent as HTTP Warning headers;
//     Deprecation: the warning every request on a deprecated resource
//     gets.
//
//   - Field selectors: Attrs names a kind's own field labels; a kind with
//     none but metadata.name and metadata.namespace gets kube-apiserver's
//     default refusal, others "field label not supported" or their
//     FieldLabelError.
//
//   - ReturnDeletedObject, Bootstrap (objects that exist from the start),
//     Reconcile (bootstrap objects brought up to date at every start),
//     Virtual (resources not kept in storage: the reviews, bindings,
//     componentstatuses) and View (a resource that is another's storage in
//     its own version: events.k8s.io/v1 Events).
//
//   - What kube-apiserver's generic registry does per kind: whether a PUT
//     must name a resourceVersion (NoUnconditionalUpdate), the message of
//     an unsupported field selector (UnknownFieldLabel), and table cells
//     that depend on the rest of a list (ListTableConvertor: the default
//     storage class).
//
// The server owns everything generic: system metadata, resourceVersions,
// preconditions, finalizers and graceful deletion, field management,
// namespace lifecycle admission, encoding, watch.
//
// # Invariants
//
//   - PrepareForCreate and PrepareForUpdate only touch fields the client
//     does not own (status on the main resource, spec on the status
//     subresource); they never fail.
//   - Validate returns field errors with full paths (metadata.name,
//     spec.replicas, ...) and kube-apiserver's messages; an empty list means
//     valid.
//   - Hooks keep no state of their own and are safe for concurrent use;
//     what must outlive a request lives in storage (allocation claims).
//   - Hook errors are API errors (*apierrors.StatusError), sent as they are.
//
// Package strategy has the adapters and validators kinds share, package
// podspec the pod template rules of pods and workloads, and package
// builtin lists every built-in kind in discovery order.
package registry
