package core

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
)

// podQuota is the pods' part in ResourceQuota, as Kubernetes' pod
// evaluator: a pod uses count/pods always, and while it has not finished
// (nor outlived its deletion grace period) pods=1 and its effective
// requests and limits (requests.cpu, limits.memory, hugepages,
// requests.<extended resource>).
type podQuota struct{}

// podQuotaNames are the names a pod uses besides prefixed and extended ones.
var podQuotaNames = []corev1.ResourceName{
	corev1.ResourcePods, "count/pods",
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
}

// podConstrainedNames are the names every container must declare when a
// quota limits them (a compatibility rule Kubernetes keeps).
var podConstrainedNames = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true,
	corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
}

func (podQuota) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	out := quota.Intersection(names, podQuotaNames)
	for _, n := range names {
		s := string(n)
		if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) {
			out = append(out, n)
			continue
		}
		if rest, ok := strings.CutPrefix(s, corev1.DefaultResourceRequestsPrefix); ok && isExtendedResource(corev1.ResourceName(rest)) {
			out = append(out, n)
		}
	}
	return out
}

func (podQuota) Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("pod quota: unexpected %T", obj)
	}
	out := corev1.ResourceList{"count/pods": *resource.NewQuantity(1, resource.DecimalSI)}
	if !podChargedForQuota(pod, now) {
		return out, nil
	}
	return quota.Add(out, podComputeUsage(podRequests(&pod.Spec), podLimits(&pod.Spec))), nil
}

// podChargedForQuota: a pod that has finished, or is past its deletion
// grace period (a lost node), no longer uses compute quota.
func podChargedForQuota(p *corev1.Pod, now time.Time) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil {
		end := p.DeletionTimestamp.Add(time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		if now.After(end) {
			return false
		}
	}
	return true
}

// podComputeUsage maps requests and limits to quota names.
func podComputeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := requests[r]; ok {
			out[r] = q.DeepCopy()
			out[corev1.DefaultResourceRequestsPrefix+r] = q.DeepCopy()
		}
		if q, ok := limits[r]; ok {
			out["limits."+r] = q.DeepCopy()
		}
	}
	for r, q := range requests {
		if strings.HasPrefix(string(r), corev1.ResourceHugePagesPrefix) {
			out[r] = q.DeepCopy()
			out[corev1.DefaultResourceRequestsPrefix+r] = q.DeepCopy()
		}
		if isExtendedResource(r) {
			out[corev1.DefaultResourceRequestsPrefix+r] = q.DeepCopy()
		}
	}
	return out
}

// podLimits are the pod's effective limits, as podRequests counts
// requests: pod-level limits when set; else the containers' and sidecars'
// sum, or an init container's with the sidecars before it when more; plus
// the overhead of the resources limited.
func podLimits(s *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	if s.Resources != nil && len(s.Resources.Limits) > 0 {
		addResources(out, s.Resources.Limits)
		return out
	}
	for _, c := range s.Containers {
		addResources(out, c.Resources.Limits)
	}
	sidecars := corev1.ResourceList{}
	for _, c := range s.InitContainers {
		if isSidecarContainer(&c) {
			addResources(sidecars, c.Resources.Limits)
			addResources(out, c.Resources.Limits)
			continue
		}
		init := sidecars.DeepCopy()
		addResources(init, c.Resources.Limits)
		for name, q := range init {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range s.Overhead {
		if cur, ok := out[name]; ok {
			cur.Add(q)
			out[name] = cur
		}
	}
	return out
}

func (podQuota) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("pod quota: unexpected %T", obj)
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return podTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !podTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return podspec.QOS(&pod.Spec) == corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return podspec.QOS(&pod.Spec) != corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		return scopeSelectorMatches(sel, pod.Spec.PriorityClassName)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespaceAffinity(pod.Spec.Affinity), nil
	}
	return false, nil
}

func podTerminating(p *corev1.Pod) bool {
	return p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
}

// scopeSelectorMatches evaluates an In/NotIn/Exists/DoesNotExist scope
// requirement against a value ("" when the object has none), as a label
// selector on the single label <scope>=<value>.
func scopeSelectorMatches(sel corev1.ScopedResourceSelectorRequirement, value string) (bool, error) {
	ops := map[corev1.ScopeSelectorOperator]selection.Operator{
		corev1.ScopeSelectorOpIn: selection.In, corev1.ScopeSelectorOpNotIn: selection.NotIn,
		corev1.ScopeSelectorOpExists: selection.Exists, corev1.ScopeSelectorOpDoesNotExist: selection.DoesNotExist,
	}
	op, ok := ops[sel.Operator]
	if !ok {
		return false, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	req, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	set := labels.Set{}
	if value != "" {
		set[string(sel.ScopeName)] = value
	}
	return labels.NewSelector().Add(*req).Matches(set), nil
}

func usesCrossNamespaceAffinity(a *corev1.Affinity) bool {
	if a == nil {
		return false
	}
	cross := func(t *corev1.PodAffinityTerm) bool { return len(t.Namespaces) != 0 || t.NamespaceSelector != nil }
	var terms []*corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, &pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if cross(t) {
			return true
		}
	}
	return false
}

// Constraints: when a quota limits cpu or memory (requests or limits),
// every container and init container must declare it; the message lists,
// per missing name, the containers that do not ("must specify limits.cpu
// for: a,b; requests.memory for: a").
func (podQuota) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("pod quota: unexpected %T", obj)
	}
	missing := map[corev1.ResourceName]map[string]bool{}
	check := func(c *corev1.Container) {
		has := podComputeUsage(c.Resources.Requests, c.Resources.Limits)
		for _, r := range required {
			if _, ok := has[r]; podConstrainedNames[r] && !ok {
				if missing[r] == nil {
					missing[r] = map[string]bool{}
				}
				missing[r][c.Name] = true
			}
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range quota.Names(toList(missing)) {
		names := make([]string, 0, len(missing[r]))
		for n := range missing[r] {
			names = append(names, n)
		}
		sort.Strings(names)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// toList turns a name-keyed map into a ResourceList to sort its names.
func toList[V any](m map[corev1.ResourceName]V) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k := range m {
		out[k] = resource.Quantity{}
	}
	return out
}

// Handles: creates, and in-place resizes.
func (podQuota) Handles(op registry.Operation, sub string) bool {
	return (op == registry.Create && sub == "") || (op == registry.Update && sub == "resize")
}

// PodRequests are the pod's effective requests (pod-level, else its
// containers', init containers' and sidecars', plus the overhead), as
// LimitRanger and ResourceQuota count them.
func PodRequests(s *corev1.PodSpec) corev1.ResourceList { return podRequests(s) }

// PodLimits are the pod's effective limits, as PodRequests.
func PodLimits(s *corev1.PodSpec) corev1.ResourceList { return podLimits(s) }
