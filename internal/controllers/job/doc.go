// Package job is the Job controller: for every batch/v1 Job it runs pods
// until spec.completions of them succeed (or, without completions, until
// one does), fails the Job when its failure criteria are met, and reports
// what happened in the Job's status. It follows Kubernetes'
// pkg/controller/job (v1.37, every Job feature GA).
//
// # Calling protocol
//
//	err := job.Add(mgr, job.Options{})
//
// Add registers two controllers on the manager, both under leader
// election and fed by the manager's shared Job and pod informers: the Job
// sync ("job") and the orphan-pod cleanup ("job-orphan-pods"), which
// removes the tracking finalizer from pods no unfinished Job controls.
//
// # Contract with the rest of the cluster
//
//   - Pods are named "<job>-<random>"; Indexed pods "<job>-<index>-<random>"
//     with the batch.kubernetes.io/job-completion-index annotation and
//     label, hostname "<job>-<index>" and JOB_COMPLETION_INDEX from the
//     label by fieldRef. The labels (job-name, controller-uid and their
//     batch.kubernetes.io/ forms) come from the template, where the
//     registry puts them. Every pod has the Job as controller and the
//     finalizer batch.kubernetes.io/job-tracking.
//   - A pod counts when it reaches phase Succeeded or Failed (a pod
//     deleted before it succeeded counts as failed, unless
//     podReplacementPolicy is Failed or a podFailurePolicy is set).
//   - Pods with backoffLimitPerIndex carry
//     batch.kubernetes.io/job-index-failure-count (and
//     ...-ignored-failure-count).
//
// # What one sync does
//
//  1. Skip Jobs that are gone, finished, or managed by another controller
//     (spec.managedBy).
//  2. Claim pods (adopting orphans adds the finalizer). Count new
//     successes and failures: those with the finalizer not yet in
//     status.uncountedTerminatedPods.
//  3. Decide the finish: an existing SuccessCriteriaMet or FailureTarget
//     condition; a FailJob rule of the pod failure policy; failures past
//     backoffLimit (or container restarts past it for OnFailure); the
//     active deadline; for Indexed Jobs maxFailedIndexes, failed indexes
//     covering the rest, or the success policy.
//  4. Finishing: delete the active pods. Otherwise, when expectations are
//     satisfied: suspended, delete all active pods (finalizer first, so
//     they are not failures); else delete the excess or create the
//     missing pods (slow-start batches, at most 500 per sync), after the
//     pod failure back-off: 10 s after the last failure, doubling per
//     consecutive failure, at most 10 minutes, from the pods' finish
//     times (per index with backoffLimitPerIndex).
//  5. Track (see trackStatus): uncounted UIDs are written before
//     finalizers are removed, and counted only after. So no finished pod
//     is lost or counted twice across restarts; an informer lagging
//     behind a finalizer removal is covered by in-memory expectations.
//  6. The interim conditions (FailureTarget, SuccessCriteriaMet) are
//     written first; Failed or Complete (with completionTime) only once
//     no pod is uncounted or terminating.
//
// # Events and metrics
//
// Events from "job-controller": SuccessfulCreate, FailedCreate,
// SuccessfulDelete, FailedDelete, Suspended, Resumed, Completed,
// TooManySucceededPods, and the failure reasons (BackoffLimitExceeded,
// DeadlineExceeded, PodFailurePolicy, FailedIndexes,
// MaxFailedIndexesExceeded) with the condition's message. Metrics on the
// manager's registry: job_controller_job_sync_duration_seconds,
// job_controller_job_syncs_total, job_controller_jobs_finished_total,
// job_controller_job_pods_finished_total,
// job_controller_pod_failures_handled_by_failure_policy_total,
// job_controller_job_pods_creation_total.
package job
