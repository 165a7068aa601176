// Package batch describes the batch/v1 resources, jobs and cron jobs:
// Kubernetes' defaults (the job's generated selector and labels included),
// validation with kube-apiserver's field paths and messages (the immutable
// parts of a job, a job's status rules, cron schedules and time zones),
// the status subresources, and the field selectors kube-apiserver supports.
package batch
