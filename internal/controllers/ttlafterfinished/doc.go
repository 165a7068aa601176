// Package ttlafterfinished is the TTL-after-finished controller: it
// deletes every batch/v1 Job with spec.ttlSecondsAfterFinished set once
// that many seconds have passed since it finished. It follows Kubernetes'
// pkg/controller/ttlafterfinished.
//
// # Calling protocol
//
//	err := ttlafterfinished.Add(mgr, ttlafterfinished.Options{})
//
// Add registers one controller (under leader election) on the manager's
// shared Job informer.
//
// # Contract
//
//   - A Job has finished when its Complete or Failed condition is True;
//     its finish time is that condition's lastTransitionTime. It expires
//     at finish time + ttlSecondsAfterFinished, by the injected clock.
//   - Before deleting, the controller reads the Job from the API server
//     (not the cache) and checks again that it is finished, has a TTL and
//     has expired: a TTL raised or removed in the meantime is honoured.
//   - The deletion uses propagationPolicy Foreground (the Job goes after
//     its pods) and a UID precondition (a new Job of the same name is never
//     deleted by mistake).
//   - A Job not yet expired is requeued for its expiry.
//   - Metric ttl_after_finished_controller_job_deletion_duration_seconds:
//     from expiry to the deletion request.
package ttlafterfinished
