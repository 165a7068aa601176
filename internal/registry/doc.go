// Package registry describes the resources the API server serves: their
// names and kinds, scope, Go types, and the strategy that defaults,
// validates and prepares each write.
//
// A Resource is pure description plus behaviour hooks; it performs no I/O.
// The apiserver package turns a Resource into HTTP endpoints, the
// watchcache package uses its Attrs hook to filter events, and the openapi
// package derives schemas from its Go type.
//
// Invariants every Strategy must keep:
//   - PrepareForCreate and PrepareForUpdate only touch fields the client
//     does not own (status on the main resource, spec on the status
//     subresource); they never fail.
//   - Validate returns field errors with full paths (metadata.name,
//     spec.replicas, ...); an empty list means valid.
//   - All hooks are safe for concurrent use and keep no state.
package registry
