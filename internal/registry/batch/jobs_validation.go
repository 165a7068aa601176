package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const (
	maxParallelismForIndexedJob             = 100000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxManagedByLength                      = 63
)

// jobOptions are the relaxations kube-apiserver derives from the old job.
type jobOptions struct {
	// prefixedLabels: the generated selector must carry the
	// batch.kubernetes.io/ labels too (new jobs, and jobs created with
	// them).
	prefixedLabels bool
	// mutableTemplate: the job is suspended and has not started (or was
	// suspended and has no active pods): its template's scheduling
	// directives and container resources may change.
	mutableTemplate bool
	// invalidSelectorValues: the old selector already had invalid label
	// values.
	invalidSelectorValues bool
}

func validateJob(j *batchv1.Job) field.ErrorList {
	errs := strategy.ValidateMeta(&j.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validateGeneratedSelector(j, true)...)
	errs = append(errs, validateJobSpecWithSelector(&j.Spec, strategy.SpecPath, jobOptions{})...)
	return append(errs, validateNameAllowsCompletions(j)...)
}

func validateGeneratedSelector(j *batchv1.Job, prefixed bool) field.ErrorList {
	if strategy.IsTrue(j.Spec.ManualSelector) || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(strategy.MetadataPath.Child("uid"), ""))
	}
	mp := strategy.SpecPath.Child("template", "metadata")
	uid := string(j.UID)
	expected := map[string]string{legacyControllerUIDLabel: uid, legacyJobNameLabel: j.Name}
	errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, mp, legacyControllerUIDLabel, uid)...)
	errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, mp, legacyJobNameLabel, j.Name)...)
	if prefixed {
		errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, mp, batchv1.ControllerUidLabel, uid)...)
		errs = append(errs, hasLabel(&j.Spec.Template.ObjectMeta, mp, batchv1.JobNameLabel, j.Name)...)
		expected[batchv1.ControllerUidLabel] = uid
		expected[batchv1.JobNameLabel] = j.Name
	}
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(labels.Set(expected)) {
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func hasLabel(m *metav1.ObjectMeta, p *field.Path, key, want string) field.ErrorList {
	got, ok := m.Labels[key]
	switch {
	case !ok:
		return field.ErrorList{field.Required(p.Child("labels").Key(key), fmt.Sprintf("must be '%s'", want))}
	case got != want:
		return field.ErrorList{field.Invalid(p.Child("labels").Key(key), m.Labels, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateNameAllowsCompletions: an indexed job's pods are named
// <job>-<index>, which must be a DNS label.
func validateNameAllowsCompletions(j *batchv1.Job) field.ErrorList {
	s := &j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || *s.Completions <= 0 {
		return nil
	}
	host := fmt.Sprintf("%s-%d", j.Name, *s.Completions-1)
	if len(validation.IsDNS1123Label(host)) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(strategy.MetadataPath.Child("name"), j.Name,
		fmt.Sprintf("will not able to create pod with invalid DNS label: %s", host))}
}

// validateJobSpecWithSelector is the spec check of a job: the spec rules,
// a required valid selector, and a template its selector matches.
func validateJobSpecWithSelector(s *batchv1.JobSpec, p *field.Path, opts jobOptions) field.ErrorList {
	errs := validateJobSpec(s, p)
	if s.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector,
			metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.invalidSelectorValues}, p.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// validateJobSpec holds the rules a job spec follows in a job and in a
// cron job's template.
func validateJobSpec(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, c := range []struct {
		name string
		v    *int32
	}{{"parallelism", s.Parallelism}, {"completions", s.Completions}} {
		errs = append(errs, strategy.ValidateNonNegative(p.Child(c.name), c.v)...)
	}
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	for _, c := range []struct {
		name string
		v    *int32
	}{{"backoffLimit", s.BackoffLimit}, {"ttlSecondsAfterFinished", s.TTLSecondsAfterFinished}, {"backoffLimitPerIndex", s.BackoffLimitPerIndex}} {
		errs = append(errs, strategy.ValidateNonNegative(p.Child(c.name), c.v)...)
	}
	if s.MaxFailedIndexes != nil {
		errs = append(errs, strategy.ValidateNonNegative(p.Child("maxFailedIndexes"), s.MaxFailedIndexes)...)
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if m := s.ManagedBy; m != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *m)...)
		if len(*m) > maxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	errs = append(errs, validateCompletionMode(s, p)...)
	if s.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(s, p.Child("podFailurePolicy"))...)
	}
	if s.SuccessPolicy != nil {
		if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), internalSuccessPolicy(s.SuccessPolicy), "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(s, p.Child("successPolicy"))...)
		}
	}
	errs = append(errs, validatePodReplacementPolicy(s, p.Child("podReplacementPolicy"))...)
	errs = append(errs, podspec.ValidatePodTemplate(&s.Template, p.Child("template"))...)
	rp := p.Child("template", "spec", "restartPolicy")
	switch rpol := s.Template.Spec.RestartPolicy; {
	case rpol == corev1.RestartPolicyAlways || rpol == "":
		errs = append(errs, field.Required(rp, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rpol != corev1.RestartPolicyOnFailure && rpol != corev1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(rp, rpol, []string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	case s.PodFailurePolicy != nil && rpol != corev1.RestartPolicyNever:
		errs = append(errs, field.Invalid(rp, rpol, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return errs
}

func validateCompletionMode(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	indexed := s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
	if cm := s.CompletionMode; cm != nil {
		if *cm != batchv1.NonIndexedCompletion && *cm != batchv1.IndexedCompletion {
			errs = append(errs, field.NotSupported(p.Child("completionMode"), cm,
				[]string{string(batchv1.NonIndexedCompletion), string(batchv1.IndexedCompletion)}))
		}
	}
	if indexed {
		errs = append(errs, validateIndexedLimits(s, p)...)
	}
	if s.CompletionMode == nil || *s.CompletionMode == batchv1.NonIndexedCompletion {
		if s.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if s.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return errs
}

func validateIndexedLimits(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Completions == nil {
		errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if s.Parallelism != nil && *s.Parallelism > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism,
			fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if s.Completions != nil && s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > *s.Completions {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes,
			fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if s.Completions != nil && *s.Completions > completionsSoftLimit && s.BackoffLimitPerIndex != nil {
		high := fmt.Sprintf("when completions are above %d and used with backoff limit per index", completionsSoftLimit)
		if s.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if s.Parallelism != nil && *s.Parallelism > parallelismLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism,
				fmt.Sprintf("must be less than or equal to %d %s", parallelismLimitForHighCompletions, high)))
		}
		if s.MaxFailedIndexes != nil && *s.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes,
				fmt.Sprintf("must be less than or equal to %d %s", maxFailedIndexesLimitForHighCompletions, high)))
		}
	}
	return errs
}

func validatePodReplacementPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	prp := s.PodReplacementPolicy
	switch {
	case prp == nil:
		return nil
	case s.PodFailurePolicy != nil:
		if *prp != batchv1.Failed {
			return field.ErrorList{field.NotSupported(p, *prp, []string{string(batchv1.Failed)})}
		}
	case *prp != batchv1.Failed && *prp != batchv1.TerminatingOrFailed:
		return field.ErrorList{field.NotSupported(p, *prp, []string{string(batchv1.Failed), string(batchv1.TerminatingOrFailed)})}
	}
	return nil
}

// validateJobUpdate: the selector, completion mode, pod failure and
// success policies, backoffLimitPerIndex and managedBy are immutable;
// completions too, except for an indexed job scaled with parallelism; the
// template may change only while the job is suspended and not started
// (scheduling directives and container resources).
func validateJobUpdate(j, old *batchv1.Job) field.ErrorList {
	opts := jobUpdateOptions(old)
	errs := strategy.ValidateMetaUpdate(&j.ObjectMeta, &old.ObjectMeta)
	s, os, p := &j.Spec, &old.Spec, strategy.SpecPath
	errs = append(errs, validateJobSpecWithSelector(s, p, opts)...)
	errs = append(errs, validateCompletionsUpdate(s, os, p.Child("completions"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(s.Selector, os.Selector, p.Child("selector"))...)
	errs = append(errs, validateTemplateUpdate(s, os, p, opts)...)
	for _, c := range []struct {
		name     string
		new, old any
	}{{"completionMode", s.CompletionMode, os.CompletionMode}, {"podFailurePolicy", s.PodFailurePolicy, os.PodFailurePolicy},
		{"backoffLimitPerIndex", s.BackoffLimitPerIndex, os.BackoffLimitPerIndex}, {"managedBy", s.ManagedBy, os.ManagedBy},
		{"successPolicy", s.SuccessPolicy, os.SuccessPolicy}} {
		errs = append(errs, apivalidation.ValidateImmutableField(c.new, c.old, p.Child(c.name))...)
	}
	return append(errs, validateNameAllowsCompletions(j)...)
}

func jobUpdateOptions(old *batchv1.Job) jobOptions {
	suspended := strategy.IsTrue(old.Spec.Suspend)
	notStarted := old.Status.StartTime == nil
	_, hadName := old.Spec.Template.Labels[batchv1.JobNameLabel]
	_, hadUID := old.Spec.Template.Labels[batchv1.ControllerUidLabel]
	invalid := old.Spec.Selector != nil &&
		len(metav1validation.ValidateLabelSelector(old.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	return jobOptions{
		prefixedLabels: hadName && hadUID,
		mutableTemplate: suspended && (notStarted || hasCondition(old.Status.Conditions, batchv1.JobSuspended)) &&
			old.Status.Active == 0,
		invalidSelectorValues: invalid,
	}
}

func validateCompletionsUpdate(s, old *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		return apivalidation.ValidateImmutableField(s.Completions, old.Completions, p)
	}
	if equality.Semantic.DeepEqual(s.Completions, old.Completions) || s.Completions == nil {
		return nil
	}
	if s.Parallelism == nil || *s.Completions != *s.Parallelism {
		return field.ErrorList{field.Invalid(p, s.Completions, "can only be modified in tandem with spec.parallelism")}
	}
	return nil
}

// validateTemplateUpdate compares the template with the old one, minus
// what a suspended job that has not started may change.
func validateTemplateUpdate(s, old *batchv1.JobSpec, p *field.Path, opts jobOptions) field.ErrorList {
	t, ot := &s.Template, &old.Template
	if opts.mutableTemplate {
		ot = ot.DeepCopy()
		switch {
		case t.Spec.Affinity == nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = nil
			if equality.Semantic.DeepEqual(*ot.Spec.Affinity, corev1.Affinity{}) {
				ot.Spec.Affinity = nil
			}
		case t.Spec.Affinity != nil && ot.Spec.Affinity == nil:
			ot.Spec.Affinity = &corev1.Affinity{NodeAffinity: t.Spec.Affinity.NodeAffinity}
		case t.Spec.Affinity != nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = t.Spec.Affinity.NodeAffinity
		}
		ot.Spec.NodeSelector, ot.Spec.Tolerations = t.Spec.NodeSelector, t.Spec.Tolerations
		ot.Annotations, ot.Labels = t.Annotations, t.Labels
		ot.Spec.SchedulingGates = t.Spec.SchedulingGates
	}
	if !strategy.IsTrue(old.Suspend) || !opts.mutableTemplate {
		return apivalidation.ValidateImmutableField(t, ot, p.Child("template"))
	}
	// Only container resources may change besides the above.
	oc := ot.Spec.DeepCopy()
	sameResources(t.Spec.Containers, oc.Containers)
	sameResources(t.Spec.InitContainers, oc.InitContainers)
	return apivalidation.ValidateImmutableField(t.Spec, *oc, p.Child("template.spec"))
}

// sameResources copies the resources of containers to the containers of
// old at the same position and with the same name.
func sameResources(cs, old []corev1.Container) {
	if len(cs) != len(old) {
		return
	}
	for i := range cs {
		if old[i].Name == cs[i].Name {
			old[i].Resources = cs[i].Resources
		}
	}
}
