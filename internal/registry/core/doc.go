// Package core describes the core/v1 resources (the legacy group served
// under /api/v1): namespaces, pods, nodes, services, configmaps, secrets,
// events, serviceaccounts, endpoints, limitranges, resourcequotas,
// persistentvolumes, persistentvolumeclaims, podtemplates,
// replicationcontrollers, and the resources not stored, componentstatuses
// and bindings; their strategies, admission and subresources.
//
// Kind-specific behaviour kept here: pods are deleted gracefully and bound
// to nodes through pods/binding (or the older bindings resource);
// namespaces are held by spec.finalizers until namespaces/finalize empties
// it, and the system namespaces exist from the start; services get cluster
// IPs and node ports from ranges claimed in storage, on create and on every
// update that needs new ones, and give them back when they stop needing
// them or are deleted; secrets fold stringData into data; events,
// services, endpoints and limitranges may be created by a PUT;
// replicationcontrollers orphan their pods unless a delete names a
// propagation policy; claims created without a class get the default
// StorageClass when storage.k8s.io is served; componentstatuses report the
// Leases of the controller manager and the scheduler and whether the store
// answers.
//
// Not here, and said where it matters: the admission that enforces limit
// ranges and quotas, the quota controller, the protection finalizers of
// volumes and claims, binding claims to volumes, serviceaccounts/token.
//
// Validation follows kube-apiserver v1.37.2 field by field; the reference
// tests (reference_test.go) replay scenarios against a real server and
// compare every answer with kube-apiserver's, recorded in
// testdata/reference.
package core
