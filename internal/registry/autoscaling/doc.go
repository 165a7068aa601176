// Package autoscaling describes the autoscaling resources: horizontal pod
// autoscalers, stored as autoscaling/v2 and served as autoscaling/v2
// (preferred) and autoscaling/v1. The v1 resource is a view of the v2
// storage: Kubernetes' conversion keeps the CPU utilization target in
// v1's targetCPUUtilizationPercentage and carries the rest (other
// metrics, current metrics, behavior, conditions) in the annotations
// Kubernetes uses, and the v2 write logic (defaults, validation, status)
// runs on every v1 write through that conversion.
package autoscaling
