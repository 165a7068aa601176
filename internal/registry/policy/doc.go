// Package policy describes the policy/v1 resources: pod disruption
// budgets, with kube-apiserver's validation (names are only path
// segments), the status subresource the disruption controller writes, and
// the field selectors kube-apiserver supports. The pods/eviction
// subresource, which reads budgets, belongs to the core group.
package policy
