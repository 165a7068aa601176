package batch

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// statusChecks says which of the job status rules apply to one update:
// kube-apiserver (JobManagedBy, GA in 1.35) applies most only when the
// fields they concern change, so that old objects stay writable.
type statusChecks struct {
	decreasingSucceeded, invalidCompleted, invalidFailed, completedForNonIndexed bool
	failedWithoutBackoffPerIndex, failedOverlapsCompleted, failedWithoutTarget   bool
	completeWithoutCriteria, finishedWithActive, finishedWithoutStart            bool
	finishedWithUncounted, startTimeUpdate, completionBeforeStart                bool
	notCompleteWithTime, completeWithoutTime, completeWithFailed                 bool
	completeWithFailureTarget, moreReadyThanActive, finishedWithTerminating      bool
}

func jobStatusChecks(j, old *batchv1.Job) statusChecks {
	s, o := &j.Status, &old.Status
	cond := func(job *batchv1.Job, t batchv1.JobConditionType) bool { return hasCondition(job.Status.Conditions, t) }
	changed := func(t batchv1.JobConditionType) bool { return cond(j, t) != cond(old, t) }
	finishedChanged := jobFinished(j) != jobFinished(old)
	completeChanged, failedChanged := changed(batchv1.JobComplete), changed(batchv1.JobFailed)
	completedChanged := s.CompletedIndexes != o.CompletedIndexes
	failedIdxChanged := !equality.Semantic.DeepEqual(s.FailedIndexes, o.FailedIndexes)
	activeChanged := s.Active != o.Active
	startChanged := !equality.Semantic.DeepEqual(s.StartTime, o.StartTime)
	completionChanged := !equality.Semantic.DeepEqual(s.CompletionTime, o.CompletionTime)
	uncountedChanged := !equality.Semantic.DeepEqual(s.UncountedTerminatedPods, o.UncountedTerminatedPods)
	readyChanged := !equality.Semantic.DeepEqual(s.Ready, o.Ready)
	terminatingChanged := !equality.Semantic.DeepEqual(s.Terminating, o.Terminating)
	suspendedZero := strategy.IsTrue(j.Spec.Suspend) && j.Spec.Completions != nil && *j.Spec.Completions == 0
	resuming := cond(old, batchv1.JobSuspended) && hasConditionFalse(s.Conditions, batchv1.JobSuspended)
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	return statusChecks{
		decreasingSucceeded:          !indexed || !equality.Semantic.DeepEqual(j.Spec.Completions, j.Spec.Parallelism),
		invalidCompleted:             completedChanged,
		invalidFailed:                failedIdxChanged,
		completedForNonIndexed:       completedChanged,
		failedWithoutBackoffPerIndex: failedIdxChanged,
		failedOverlapsCompleted:      failedIdxChanged || completedChanged,
		failedWithoutTarget:          failedChanged || failedIdxChanged,
		completeWithoutCriteria:      completeChanged || changed(batchv1.JobSuccessCriteriaMet),
		finishedWithActive:           finishedChanged || activeChanged,
		finishedWithoutStart:         (finishedChanged || startChanged) && !suspendedZero,
		finishedWithUncounted:        finishedChanged || uncountedChanged,
		startTimeUpdate:              startChanged && !resuming,
		completionBeforeStart:        startChanged || completionChanged,
		notCompleteWithTime:          completeChanged || completionChanged,
		completeWithoutTime:          completeChanged || completionChanged,
		completeWithFailed:           completeChanged || failedChanged,
		completeWithFailureTarget:    completeChanged || changed(batchv1.JobFailureTarget),
		moreReadyThanActive:          readyChanged || activeChanged,
		finishedWithTerminating:      finishedChanged || terminatingChanged,
	}
}

// validateJobStatusUpdate applies the rules kube-apiserver holds the job
// controller (or another manager of the job) to.
func validateJobStatusUpdate(j, old *batchv1.Job) field.ErrorList {
	c := jobStatusChecks(j, old)
	errs := strategy.ValidateMetaUpdate(&j.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateJobStatus(j, c)...)
	p := strategy.StatusPath
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if hasCondition(old.Status.Conditions, t) && !hasCondition(j.Status.Conditions, t) {
			errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	s, o := &j.Status, &old.Status
	if s.Failed < o.Failed {
		errs = append(errs, field.Invalid(p.Child("failed"), s.Failed, "cannot decrease the failed counter"))
	}
	if c.decreasingSucceeded && s.Succeeded < o.Succeeded {
		errs = append(errs, field.Invalid(p.Child("succeeded"), s.Succeeded, "cannot decrease the succeeded counter"))
	}
	if s.CompletionTime != nil && o.CompletionTime != nil && !s.CompletionTime.Equal(o.CompletionTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "field is immutable"))
	}
	if c.startTimeUpdate && o.StartTime != nil && !equality.Semantic.DeepEqual(o.StartTime, s.StartTime) && !strategy.IsTrue(j.Spec.Suspend) {
		errs = append(errs, field.Invalid(p.Child("startTime"), s.StartTime, "field is immutable for unsuspended job once set"))
	}
	criteria := func(job *batchv1.Job) bool { return hasCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet) }
	if criteria(old) && !criteria(j) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if hasCondition(o.Conditions, batchv1.JobComplete) && !criteria(old) && criteria(j) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

func validateJobStatus(j *batchv1.Job, c statusChecks) field.ErrorList {
	s, p := &j.Status, strategy.StatusPath
	errs := apivalidation.ValidateNonnegativeField(int64(s.Active), p.Child("active"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.Failed), p.Child("failed"))...)
	errs = append(errs, strategy.ValidateNonNegative(p.Child("ready"), s.Ready)...)
	errs = append(errs, strategy.ValidateNonNegative(p.Child("terminating"), s.Terminating)...)
	errs = append(errs, validateUncounted(s.UncountedTerminatedPods, p.Child("uncountedTerminatedPods"))...)
	errs = append(errs, validateJobConditions(j, c)...)
	errs = append(errs, validateJobIndexes(j, c)...)
	return append(errs, validateJobConditionPairs(j)...)
}

func validateUncounted(u *batchv1.UncountedTerminatedPods, p *field.Path) field.ErrorList {
	if u == nil {
		return nil
	}
	var errs field.ErrorList
	seen := sets.New[types.UID]()
	for _, l := range []struct {
		name string
		uids []types.UID
	}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
		for i, k := range l.uids {
			ip := p.Child(l.name).Index(i)
			switch {
			case k == "":
				errs = append(errs, field.Invalid(ip, k, "must not be empty"))
			case seen.Has(k):
				errs = append(errs, field.Duplicate(ip, k))
			default:
				seen.Insert(k)
			}
		}
	}
	return errs
}

func validateJobConditions(j *batchv1.Job, c statusChecks) field.ErrorList {
	s, p := &j.Status, strategy.StatusPath
	cp := p.Child("conditions")
	has := func(t batchv1.JobConditionType) bool { return hasCondition(s.Conditions, t) }
	complete, failed := has(batchv1.JobComplete), has(batchv1.JobFailed)
	var errs field.ErrorList
	if c.completeWithFailed && complete && failed {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	}
	if c.completeWithFailureTarget && complete && has(batchv1.JobFailureTarget) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if c.notCompleteWithTime && s.CompletionTime != nil && !complete {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	}
	if c.completeWithoutTime && s.CompletionTime == nil && complete {
		errs = append(errs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if c.completionBeforeStart && s.StartTime != nil && s.CompletionTime != nil && s.CompletionTime.Before(s.StartTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`"))
	}
	if c.failedWithoutTarget && failed && !has(batchv1.JobFailureTarget) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if c.completeWithoutCriteria && complete && !has(batchv1.JobSuccessCriteriaMet) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	finished := jobFinished(j)
	if c.finishedWithActive && s.Active > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("active"), s.Active, "active>0 is invalid for finished job"))
	}
	if c.finishedWithoutStart && s.StartTime == nil && finished {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if u := s.UncountedTerminatedPods; c.finishedWithUncounted && finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0 {
		errs = append(errs, field.Invalid(p.Child("uncountedTerminatedPods"), u, "must be empty for finished job"))
	}
	return errs
}

func validateJobIndexes(j *batchv1.Job, c statusChecks) field.ErrorList {
	s, sp, p := &j.Status, &j.Spec, strategy.StatusPath
	var errs field.ErrorList
	if c.invalidCompleted && sp.Completions != nil {
		if _, err := parseIndexes(s.CompletedIndexes, *sp.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err.Error())))
		}
	}
	if c.invalidFailed && sp.Completions != nil && sp.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := parseIndexes(*s.FailedIndexes, *sp.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), s.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err.Error())))
		}
	}
	indexed := sp.CompletionMode != nil && *sp.CompletionMode == batchv1.IndexedCompletion
	if c.completedForNonIndexed && s.CompletedIndexes != "" && !indexed {
		errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if c.failedWithoutBackoffPerIndex && sp.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if c.failedOverlapsCompleted && sp.Completions != nil && s.FailedIndexes != nil {
		if err := indexesOverlap(s.CompletedIndexes, *s.FailedIndexes, *sp.Completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, err.Error()))
		}
	}
	if c.finishedWithTerminating && s.Terminating != nil && *s.Terminating > 0 && jobFinished(j) {
		errs = append(errs, field.Invalid(p.Child("terminating"), s.Terminating, "terminating>0 is invalid for finished job"))
	}
	if c.moreReadyThanActive && s.Ready != nil && *s.Ready > s.Active {
		errs = append(errs, field.Invalid(p.Child("ready"), *s.Ready, "cannot set more ready pods than active"))
	}
	return errs
}

// validateJobConditionPairs holds the condition rules checked on every
// status write.
func validateJobConditionPairs(j *batchv1.Job) field.ErrorList {
	conds := j.Status.Conditions
	cp := strategy.StatusPath.Child("conditions")
	criteria := hasCondition(conds, batchv1.JobSuccessCriteriaMet)
	var errs field.ErrorList
	if criteria && hasCondition(conds, batchv1.JobFailed) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if criteria && hasCondition(conds, batchv1.JobFailureTarget) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if j.Spec.SuccessPolicy != nil && !criteria && hasCondition(conds, batchv1.JobComplete) {
		errs = append(errs, field.Invalid(cp, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

// indexesOverlap reports the first index both lists name; malformed
// intervals are skipped (they are reported elsewhere).
func indexesOverlap(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	ci, fi := 0, 0
	cx, cy, cerr := parseInterval(cs[0], completions)
	fx, fy, ferr := parseInterval(fs[0], completions)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cerr != nil:
			ci++
			if ci < len(cs) {
				cx, cy, cerr = parseInterval(cs[ci], completions)
			}
		case ferr != nil:
			fi++
			if fi < len(fs) {
				fx, fy, ferr = parseInterval(fs[fi], completions)
			}
		case cx <= fy && fx <= cy:
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cx, fx))
		case cx <= fx:
			ci++
			if ci < len(cs) {
				cx, cy, cerr = parseInterval(cs[ci], completions)
			}
		default:
			fi++
			if fi < len(fs) {
				fx, fy, ferr = parseInterval(fs[fi], completions)
			}
		}
	}
	return nil
}
