package batch

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
)

// The warnings kube-apiserver sends with writes of jobs and cron jobs: a
// name that is no DNS label (create), and the job spec's (jobSpecWarnings)
// on create and on an update that changes the spec.

func jobWarnings(j, old *batchv1.Job) []string {
	p := field.NewPath("spec")
	if old == nil {
		return append(podspec.NameWarning(j.Name), jobSpecWarnings(&j.Spec, p)...)
	}
	if apiequality.Semantic.DeepEqual(j.Spec, old.Spec) {
		return nil
	}
	return jobSpecWarnings(&j.Spec, p)
}

// cronJobWarnings adds, on update, a time zone written into the schedule
// (which only an object created before that was refused can have), at
// kube-apiserver's path "spec.spec.schedule".
func cronJobWarnings(c, old *batchv1.CronJob) []string {
	p := field.NewPath("spec", "jobTemplate", "spec")
	if old == nil {
		return append(podspec.NameWarning(c.Name), jobSpecWarnings(&c.Spec.JobTemplate.Spec, p)...)
	}
	var out []string
	if !apiequality.Semantic.DeepEqual(c.Spec, old.Spec) {
		out = jobSpecWarnings(&c.Spec.JobTemplate.Spec, p)
	}
	if strings.Contains(c.Spec.Schedule, "TZ") {
		out = append(out, fmt.Sprintf("cannot use TZ or CRON_TZ in %s, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", field.NewPath("spec", "spec", "schedule")))
	}
	return out
}

// Above these, an indexed job may not be able to track its failed indexes.
const (
	indexedCompletionsSoftLimit = 100_000
	indexedParallelismSoftLimit = 10_000
)

// jobSpecWarnings warns of an indexed job too large to track, then of its
// pod template.
func jobSpecWarnings(s *batchv1.JobSpec, p *field.Path) []string {
	var out []string
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion &&
		deref(s.Completions) > indexedCompletionsSoftLimit && deref(s.Parallelism) > indexedParallelismSoftLimit {
		out = append(out, fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail", p))
	}
	return append(out, podspec.TemplateWarnings(&s.Template, p.Child("template"))...)
}

func deref(n *int32) int32 {
	if n == nil {
		return 0
	}
	return *n
}
