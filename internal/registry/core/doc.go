// Package core describes the core/v1 resources (the legacy group served
// under /api/v1): namespaces, pods, nodes, services, configmaps, secrets,
// events, and their strategies, admission and subresources.
//
// Kind-specific behaviour kept here: pods are deleted gracefully and bound
// to nodes through pods/binding; namespaces are held by spec.finalizers
// until namespaces/finalize empties it, and the system namespaces exist from
// the start; services get cluster IPs and node ports from ranges claimed in
// storage, on create and on every update that needs new ones, and give them
// back when they stop needing them or are deleted; secrets fold stringData
// into data; events, services and leases may be created by a PUT.
package core
