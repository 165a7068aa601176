// Package cronjob is the CronJob controller: for every batch/v1 CronJob it
// creates a Job at each time of spec.schedule, within the limits of the
// concurrency policy and the starting deadline, tracks the Jobs it
// created in status, and deletes finished Jobs beyond the history limits.
// It follows Kubernetes' controller (pkg/controller/cronjob, v2).
//
// # Calling protocol
//
//	err := cronjob.Add(mgr, cronjob.Options{Clock: clk})
//
// Add registers one controller runnable (it runs only while the manager
// leads) fed by the manager's shared CronJob and Job informers; the Job
// informer gets the controllerref.ControllerUIDIndex. Options.Clock is the
// only source of "now": schedule times are compared with it and the
// requeue at the next schedule time runs on it, so a test can drive the
// controller with a fake clock.
//
// # Schedule
//
// spec.schedule is read by github.com/robfig/cron/v3's standard parser,
// as Kubernetes reads it: five fields or a macro (@yearly, @monthly,
// @weekly, @daily, @hourly, @every <duration>). spec.timeZone (an IANA
// name, validated by the API server) is applied as a TZ= prefix; without
// it the controller process's local time zone is used, as in Kubernetes.
//
// # One sync (key namespace/name)
//
//  1. History: when a limit is set, the oldest finished Jobs (by
//     status.startTime, then name) beyond successfulJobsHistoryLimit
//     (Complete) and failedJobsHistoryLimit (Failed) are deleted
//     (background propagation), event SuccessfulDelete. A refused deletion
//     (event FailedDelete) fails the sync once the rest of it is done, so
//     it is retried with back-off; kube-controller-manager looks again only
//     at the next schedule time.
//  2. Status: a finished Job leaves status.active (SawCompletedJob); the
//     latest completionTime of a Complete Job is lastSuccessfulTime; an
//     active entry whose Job the server no longer has is dropped
//     (MissingJob); an unfinished Job it controls but never recorded is
//     reported (UnexpectedJob) and left alone (kubectl create job --from
//     makes such Jobs) unless it is one the controller made itself (its
//     scheduled-timestamp annotation and the name derived from it) and
//     whose status write was lost: that one is tracked again, so that Forbid
//     holds (Kubernetes leaves it out of status.active).
//  3. A CronJob being deleted, with an invalid time zone (UnknownTimeZone),
//     suspended, or with a schedule that does not parse
//     (UnparseableSchedule) or has impossible times (InvalidSchedule) starts
//     nothing and is not requeued until it changes.
//  4. The most recent schedule time after max(lastScheduleTime,
//     creationTimestamp, now - startingDeadlineSeconds) and not after now is
//     the candidate; earlier missed times are skipped. More than 100 missed
//     times warn TooManyMissedTimes (the candidate still starts). A candidate
//     older than the deadline is reported (MissSchedule); one already
//     started (lastScheduleTime or an active Job of that name) is skipped.
//  5. Forbid with an active Job: JobAlreadyActive, nothing starts. Replace:
//     the active Jobs are deleted first. Allow: Jobs may overlap.
//  6. The Job <name>-<schedule time in minutes since the epoch> is created
//     from spec.jobTemplate (its labels, annotations and spec), with the
//     annotation batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339
//     in the CronJob's time zone) and the CronJob as controller owner
//     (SuccessfulCreate, FailedCreate). The deterministic name is the lock:
//     a repeated sync gets AlreadyExists and only records the Job.
//  7. status (active, lastScheduleTime, lastSuccessfulTime) is written
//     through the status subresource when it changed, and the CronJob is
//     requeued for the next schedule time plus 100 ms.
//
// Events come from component "cronjob-controller" with Kubernetes' reasons
// and messages. Metric: cronjob_controller_job_creation_skew_duration_seconds
// (from the schedule time to the Job's creation, on the controller's
// clock).
//
// Running the Jobs is the Job controller's business; this controller only
// reads their Complete and Failed conditions.
package cronjob
