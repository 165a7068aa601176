// Package podautoscaler is the horizontal pod autoscaler controller
// (kube-controller-manager's horizontal-pod-autoscaler-controller): it sets
// the replicas of a HorizontalPodAutoscaler's target from its pods' resource
// usage, as read from metrics.k8s.io.
//
// # The contract
//
// Every autoscaler (autoscaling/v2; autoscaling/v1 ones are the same
// objects seen through the v1 view) is synced when created, when its spec
// changes (a new generation) and every SyncPeriod (15 s, on the injected
// clock) after its last sync; the controller's own status writes do not
// trigger a sync. A sync:
//
//  1. reads the target's scale subresource (any kind serving one:
//     Deployments, ReplicaSets, StatefulSets, ReplicationControllers,
//     custom resources; resolved by discovery, the reference's version
//     first). Failure: AbleToScale False FailedGetScale and a FailedGetScale
//     event; success: AbleToScale True SucceededGetScale.
//  2. A target at 0 replicas is left alone (ScalingActive False
//     ScalingDisabled: scaling from zero needs Object or External metrics).
//     Above maxReplicas or below minReplicas (default 1) it is brought back
//     to the bound ("Current number of replicas above Spec.MaxReplicas").
//  3. Otherwise each metric proposes a count and the highest wins.
//     Resource and ContainerResource metrics (Utilization of the requests,
//     or AverageValue) list the PodMetrics of the target's selector and
//     compute as kube's replica calculator: deleted and failed pods
//     ignored; pending pods, and for cpu pods within the cpu initialization
//     period (5 min) that are unready or whose sample predates readiness,
//     counted as unready; pods without metrics counted as missing; within
//     the tolerance (0.1, or behavior.scaleUp/scaleDown.tolerance) nothing
//     changes; with missing or unready pods the ratio is recomputed with
//     missing pods at 100 % of their request (or the target) when
//     scaling down and 0 when scaling up, unready pods at 0 when scaling
//     up, and a change of direction keeps the current count. Pods, Object
//     and External metrics need the custom or external metrics API, which
//     setpoint does not serve: they fail with kube's reasons
//     (FailedGetPodsMetric, FailedGetObjectMetric, FailedGetExternalMetric)
//     and "unable to get metric …" messages. If every metric fails, or one
//     fails and the others would scale down, ScalingActive is False with the
//     first failure's reason, a FailedComputeMetricsReplicas event is
//     recorded and nothing is scaled; else ScalingActive True
//     ValidMetricFound.
//  4. Normalization. Without a behavior: the highest recommendation of the
//     last 5 minutes (AbleToScale ScaleDownStabilized when it holds),
//     bounded by minReplicas and min(maxReplicas, max(2×current, 4)).
//     With one (the API server defaults its rules): the lowest
//     recommendation of the scale-up window and the highest of the
//     scale-down window, then the rate policies (Pods and Percent per
//     periodSeconds, selectPolicy Max/Min/Disabled, the period's starting
//     size counting the scale events of both directions within it).
//     ScalingLimited says which bound applied (TooManyReplicas,
//     TooFewReplicas, ScaleUpLimit, ScaleDownLimit, or False
//     DesiredWithinRange).
//  5. A different count is written to the scale subresource (retried on
//     conflicts): a SuccessfulRescale event "New size: 4; reason: cpu
//     resource utilization (percentage of request) above target" (or "All
//     metrics below target"), AbleToScale True SucceededRescale,
//     ScaledToZero False NotScaledToZero, lastScaleTime and the scale
//     event the rate policies count, both at the time the write returned
//     (the policies' periods run from the rescale, not from the sync's
//     start); a failed write is a FailedRescale event and AbleToScale
//     False FailedUpdateScale.
//  6. The status (observedGeneration, currentReplicas, desiredReplicas,
//     currentMetrics, conditions) is written when it changed.
//
// Two autoscalers selecting the same pods are refused (ScalingActive
// False AmbiguousSelector). Recommendations and scale events are kept in
// memory, as in kube-controller-manager: a restart starts the windows
// afresh. Metrics: kube's horizontal_pod_autoscaler_controller_*
// (reconciliations_total, reconciliation_duration_seconds,
// metric_computation_total, metric_computation_duration_seconds,
// num_horizontal_pod_autoscalers, desired_replicas).
package podautoscaler
