// Package strategy holds what the strategies of the built-in kinds share:
// adapters from hooks written against a kind's Go type to the registry
// interfaces (Typed, TypedStatus, CreateOnUpdate, ReplicasScale, Attrs),
// the metadata checks every kind makes (ValidateMeta, ValidateMetaUpdate),
// and small field validators whose messages are kube-apiserver's (names,
// enums, certificate signer names and ClusterTrustBundle names, the user
// annotations of pod certificates).
//
// A hook given an object of another Go type is a programming error of the
// caller: Prepare and Default hooks leave it alone, Validate hooks reject it
// with an internal error, so that it never reaches storage.
//
// Everything here is stateless and safe for concurrent use.
package strategy
