// Package coordination describes the coordination.k8s.io/v1 resources:
// leases, which a PUT may create (leader election and node heartbeats).
package coordination
