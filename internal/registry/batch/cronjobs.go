package batch

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	// Time zones are checked against the IANA database compiled in, as
	// kube-apiserver does, whatever the machine has.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func cronJobsResource() *registry.Resource {
	return &registry.Resource{
		Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob", ListKind: "CronJobList",
		Singular: "cronjob", ShortNames: []string{"cj"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &batchv1.CronJob{} },
		NewList: func() runtime.Object { return &batchv1.CronJobList{} },
		Strategy: strategy.Typed[*batchv1.CronJob]{
			PrepareCreate: func(c *batchv1.CronJob) {
				c.Status = batchv1.CronJobStatus{}
				podspec.DropDisabledTemplateFields(&c.Spec.JobTemplate.Spec.Template, nil)
			},
			PrepareUpdate: func(c, old *batchv1.CronJob) {
				c.Status = old.Status
				podspec.DropDisabledTemplateFields(&c.Spec.JobTemplate.Spec.Template, &old.Spec.JobTemplate.Spec.Template)
			},
			Defaults:       defaultCronJob,
			ValidateNew:    validateCronJob,
			ValidateChange: validateCronJobUpdate,
			Warn:           cronJobWarnings,
		},
		// Kubernetes checks nothing of a cron job's status but metadata.
		Status: strategy.TypedStatus[*batchv1.CronJob]{
			PrepareUpdate: func(c, old *batchv1.CronJob) { c.Spec = old.Spec },
			ValidateChange: func(c, old *batchv1.CronJob) field.ErrorList {
				return strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
			},
		},
		Attrs:           strategy.Attrs[*batchv1.CronJob](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("batch", "CronJob"),
	}
}

// defaultCronJob applies SetDefaults_CronJob and, to the job template,
// the defaults of a job spec that are not a job's own (a template has no
// selector, completions or backoff limit until a job is made of it).
func defaultCronJob(c *batchv1.CronJob) {
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = new(int32(1))
	}
	defaultTemplateJobSpec(&s.JobTemplate.Spec)
}

func validateCronJob(c *batchv1.CronJob) field.ErrorList {
	errs := strategy.ValidateMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validateCronJobSpec(&c.Spec, nil, strategy.SpecPath)...)
	// Job names add 11 characters (a dash and the scheduled minute).
	if len(c.Name) > validation.DNS1035LabelMaxLength-11 {
		errs = append(errs, field.Invalid(strategy.MetadataPath.Child("name"), c.Name, "must be no more than 52 characters"))
	}
	return errs
}

func validateCronJobUpdate(c, old *batchv1.CronJob) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateCronJobSpec(&c.Spec, &old.Spec, strategy.SpecPath)...)
}

func validateCronJobSpec(s, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else {
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, validateSchedule(s.Schedule, allowTZ, s.TimeZone, p.Child("schedule"))...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !equalStringPtr(old.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, p.Child("timeZone"))...)
	}
	switch s.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), s.ConcurrencyPolicy, []string{
			string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent)}))
	}
	tp := p.Child("jobTemplate", "spec")
	errs = append(errs, validateJobSpec(&s.JobTemplate.Spec, tp)...)
	if sel := s.JobTemplate.Spec.Selector; sel != nil {
		errs = append(errs, field.Invalid(tp.Child("selector"), sel, "`selector` will be auto-generated"))
	}
	if ms := s.JobTemplate.Spec.ManualSelector; strategy.IsTrue(ms) {
		errs = append(errs, field.NotSupported(tp.Child("manualSelector"), ms, []string{"nil", "false"}))
	}
	errs = append(errs, strategy.ValidateNonNegative(p.Child("successfulJobsHistoryLimit"), s.SuccessfulJobsHistoryLimit)...)
	return append(errs, strategy.ValidateNonNegative(p.Child("failedJobsHistoryLimit"), s.FailedJobsHistoryLimit)...)
}

func equalStringPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// parseSchedule parses a standard cron schedule as the cron job controller
// does, turning the parser's panics on malformed input into errors.
func parseSchedule(schedule string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(schedule)
}

func validateSchedule(schedule string, allowTZ bool, tz *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := parseSchedule(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && tz != nil:
		errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(schedule, "TZ"):
		errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

var timeZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(p, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(p, tz, err.Error()))
	}
	return errs
}
