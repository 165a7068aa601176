package batch

import (
	"math"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// The labels a job's pods carry, by which its generated selector finds
// them; the unprefixed ones are the legacy forms kube-apiserver still
// adds.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

func jobsResource() *registry.Resource {
	return &registry.Resource{
		Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", ListKind: "JobList",
		Singular: "job", Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &batchv1.Job{} },
		NewList: func() runtime.Object { return &batchv1.JobList{} },
		Strategy: jobStrategy{strategy.Typed[*batchv1.Job]{
			PrepareCreate: func(j *batchv1.Job) {
				generateSelector(j)
				j.Status = batchv1.JobStatus{}
				podspec.DropDisabledTemplateFields(&j.Spec.Template, nil)
			},
			PrepareUpdate: func(j, old *batchv1.Job) {
				j.Status = old.Status
				podspec.DropDisabledTemplateFields(&j.Spec.Template, &old.Spec.Template)
			},
			Defaults:       defaultJob,
			ValidateNew:    validateJob,
			ValidateChange: validateJobUpdate,
			Warn:           jobWarnings,
		}},
		// The job controller's status writes: spec kept, metadata as sent.
		Status: strategy.TypedStatus[*batchv1.Job]{
			PrepareUpdate:  func(j, old *batchv1.Job) { j.Spec = old.Spec },
			ValidateChange: validateJobStatusUpdate,
		},
		// A DELETE without a propagation policy leaves the job's pods, as
		// kube-apiserver's batch/v1 jobs do (kubectl asks for background).
		OrphanByDefault: true,
		OrphanWarning: "child pods are preserved by default when jobs are deleted; " +
			"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning",
		Attrs: strategy.Attrs(true, func(j *batchv1.Job, set fields.Set) {
			set["status.successful"] = strconv.Itoa(int(j.Status.Succeeded))
		}),
		FieldLabelError: strategy.UnknownFieldLabelOf("Job"),
		Table:           printers.For("batch", "Job"),
	}
}

// defaultJob applies batch/v1's SetDefaults_Job and the pod template's
// defaults.
func defaultJob(j *batchv1.Job) {
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = new(int32(1))
		s.Parallelism = new(int32(1))
	}
	if s.Parallelism == nil {
		s.Parallelism = new(int32(1))
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = new(int32(math.MaxInt32))
		} else {
			s.BackoffLimit = new(int32(6))
		}
	}
	labelsFromTemplate(j)
	if s.CompletionMode == nil {
		s.CompletionMode = new(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = new(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = new(batchv1.TerminatingOrFailed)
		}
	}
	if s.ManualSelector == nil {
		s.ManualSelector = new(false)
	}
	defaultTemplateJobSpec(s)
}

// defaultTemplateJobSpec holds the defaults a job spec gets in a job and
// in a cron job's template alike: the pod failure policy's condition
// status and the pod template's.
func defaultTemplateJobSpec(s *batchv1.JobSpec) {
	if pfp := s.PodFailurePolicy; pfp != nil {
		for i := range pfp.Rules {
			for k := range pfp.Rules[i].OnPodConditions {
				if c := &pfp.Rules[i].OnPodConditions[k]; c.Status == "" {
					c.Status = corev1.ConditionTrue
				}
			}
		}
	}
	podspec.DefaultPodSpec(&s.Template.Spec)
}

// jobStrategy gives a stored job without labels its template's (after
// validation, as kube-apiserver does when it decodes the job).
type jobStrategy struct{ strategy.Typed[*batchv1.Job] }

// DefaultStored implements registry.StoredDefaulter.
func (jobStrategy) DefaultStored(obj runtime.Object) {
	if j, ok := obj.(*batchv1.Job); ok {
		labelsFromTemplate(j)
	}
}

// labelsFromTemplate gives a job without labels its template's labels map
// itself. kube-apiserver defaults a job so when it decodes it, the request
// and the stored object alike: the job shares the map, so the labels
// generateSelector adds to the template show in the job's labels too, and
// a job created without template labels gets them when it is stored.
func labelsFromTemplate(j *batchv1.Job) {
	if j.Spec.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = j.Spec.Template.Labels
	}
}

// generateSelector gives a job without manualSelector its pods' labels
// (job name and uid, prefixed and legacy) and a selector on the uid.
func generateSelector(j *batchv1.Job) {
	if strategy.IsTrue(j.Spec.ManualSelector) {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	uid := string(j.UID)
	for _, kv := range [][2]string{
		{legacyJobNameLabel, j.Name}, {batchv1.JobNameLabel, j.Name},
		{legacyControllerUIDLabel, uid}, {batchv1.ControllerUidLabel, uid},
	} {
		if _, ok := t.Labels[kv[0]]; !ok {
			t.Labels[kv[0]] = kv[1]
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = uid
	}
}

// hasCondition reports whether the job has a condition of type t whose
// status is True.
func hasCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func hasConditionFalse(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

func jobFinished(j *batchv1.Job) bool {
	return hasCondition(j.Status.Conditions, batchv1.JobComplete) || hasCondition(j.Status.Conditions, batchv1.JobFailed)
}
