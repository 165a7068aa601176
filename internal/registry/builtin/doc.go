// Package builtin describes the resources served from the start: core/v1
// namespaces, pods, nodes, services, configmaps, secrets and events;
// coordination.k8s.io/v1 leases; apps/v1 deployments and replicasets.
//
// Resources returns one registry.Resource per kind with the names,
// short names, categories and scope a Kubernetes 1.3x server advertises in
// discovery, and the per-kind behaviour: strategies, status strategies,
// scale accessors, field attributes and table columns (from package
// printers). Everything here is stateless and safe for concurrent use;
// Resources builds new descriptors on each call.
//
// What a strategy owns, and what it does not. The server (package objects)
// owns system metadata: uid, creationTimestamp, generation,
// resourceVersion, generateName, deletion and finalizers. Strategies own
// the kind's own fields:
//   - Default fills the defaults controllers and clients rely on (pod spec
//     defaults also inside deployment and replica set templates). It is
//     idempotent and runs on every main-resource write.
//   - PrepareForCreate resets what clients may not set (usually status;
//     pods start Pending with their QoS class; namespaces start Active with
//     the "kubernetes" spec finalizer; nodes keep the status they post).
//   - PrepareForUpdate keeps old's status on the main resource; the status
//     strategies keep everything of old but status (spec, labels,
//     annotations, finalizers and owner references come from old).
//   - Validate and ValidateUpdate return field errors with full paths
//     ("spec.template.metadata.labels", "metadata.name"), metadata included
//     (names: DNS-1123 subdomains, labels for namespaces and services).
//     An update that names no resourceVersion is treated as unconditional.
//
// Calling protocol, as the server runs it on a write:
//
//	create: Default, PrepareForCreate, Validate
//	update: PrepareForUpdate, Default, ValidateUpdate
//	status: Status.PrepareForUpdate, Status.ValidateUpdate
//
// Hooks given an object of the wrong Go type do nothing, and validation
// rejects it with an internal error.
//
// Some strategies implement the optional interfaces of package registry:
// pods are deleted gracefully (GracefulDeleteStrategy), namespaces are held
// by spec.finalizers (DeletionHolder; NamespaceFinalize is the write logic
// of namespaces/finalize), and services, events and leases may be created
// by a PUT (CreateOnUpdateStrategy).
package builtin
