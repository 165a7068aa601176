package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// policyMatch is what the pod failure policy says about one failed pod.
type policyMatch struct {
	// failJobMessage is set when a FailJob rule matched.
	failJobMessage *string
	// countFailed reports whether the failure counts toward backoffLimit.
	countFailed bool
	// action is the matched rule's action; nil when no rule matched.
	action *batchv1.PodFailurePolicyAction
}

// matchPodFailurePolicy applies the first rule of policy that matches the
// failed pod p: onExitCodes against the containers' (then the init
// containers') non-zero exit codes, onPodConditions against its
// conditions. No match counts the failure.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, p *corev1.Pod) policyMatch {
	for i, rule := range policy.Rules {
		var detail string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&p.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			detail = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, p.Namespace, p.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&p.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			detail = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				p.Namespace, p.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		action := rule.Action
		switch action {
		case batchv1.PodFailurePolicyActionFailJob:
			return policyMatch{failJobMessage: &detail, countFailed: true, action: &action}
		case batchv1.PodFailurePolicyActionIgnore:
			return policyMatch{action: &action}
		case batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex:
			return policyMatch{countFailed: true, action: &action}
		}
	}
	return policyMatch{countFailed: true}
}

func matchOnExitCodes(st *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if cs := matchingContainer(st.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchingContainer(st.InitContainerStatuses, req)
}

func matchingContainer(list []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i := range list {
		cs := &list[i]
		t := cs.State.Terminated
		if t == nil || t.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != cs.Name {
			continue
		}
		in := slices.Contains(req.Values, t.ExitCode)
		if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
			return cs
		}
	}
	return nil
}

func matchOnPodConditions(st *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		for _, pat := range patterns {
			status := pat.Status
			if status == "" {
				status = corev1.ConditionTrue
			}
			if c.Type == pat.Type && c.Status == status {
				return c
			}
		}
	}
	return nil
}

// failJobMessage returns the message of the first FailJob rule matched by
// a failed pod of pods, or nil.
func failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, job) {
			if m := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); m.failJobMessage != nil {
				return m.failJobMessage
			}
		}
	}
	return nil
}

// matchSuccessPolicy returns the message of the first rule of policy that
// the succeeded indexes meet.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, succeeded intervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		met := false
		if rule.SucceededIndexes != nil {
			required := parseIntervals(*rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				continue
			}
			n := overlap(required, succeeded)
			met = n == required.total() || (rule.SucceededCount != nil && n >= int(*rule.SucceededCount))
		} else if rule.SucceededCount != nil {
			met = succeeded.total() >= int(*rule.SucceededCount)
		}
		if met {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// overlap counts the indexes in both a and b.
func overlap(a, b intervals) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		if o := min(a[i].last, b[j].last) - max(a[i].first, b[j].first) + 1; o > 0 {
			n += o
		}
		if a[i].last < b[j].last {
			i++
		} else {
			j++
		}
	}
	return n
}

// onlyReplaceFailedPods reports whether a replacement waits for the old
// pod to reach phase Failed (podReplacementPolicy Failed, implied by a
// pod failure policy).
func onlyReplaceFailedPods(job *batchv1.Job) bool {
	if job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed {
		return true
	}
	return job.Spec.PodFailurePolicy != nil
}

// isPodFailed reports whether p counts as a failure: phase Failed, or,
// unless only failed pods are replaced, deleted before it succeeded (an
// orphan may never reach a terminal phase).
func isPodFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(job) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

// isTerminating reports whether p is being deleted and not yet terminal.
func isTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// pastBackoffLimitOnFailure reports whether, for restartPolicy OnFailure,
// the container restarts of running and pending pods reach backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range p.Status.InitContainerStatuses {
			restarts += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}
