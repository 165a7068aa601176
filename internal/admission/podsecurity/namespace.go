package podsecurity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

var namespaceKind = schema.GroupKind{Kind: "Namespace"}

// validateNamespace refuses malformed policy labels (on create, and on
// update when they changed), warns when an exempt namespace asks for a
// policy, and, when an update makes the enforce level stricter, warns
// about the namespace's pods that the new level would refuse.
func (p *Plugin) validateNamespace(ctx context.Context, env registry.Env, a *registry.Attributes, ns *corev1.Namespace) outcome {
	if a.Subresource != "" {
		return outcome{}
	}
	policy, errs := policyFor(ns.Labels, p.defaults)
	exempt := slices.Contains(p.exemptions.Namespaces, ns.Name)
	switch a.Operation {
	case registry.Create:
		if len(errs) > 0 {
			return outcome{err: apierrors.NewInvalid(namespaceKind, ns.Name, errs)}
		}
		if exempt {
			return p.exemptNamespaceWarning(ns, policy)
		}
		return outcome{}
	case registry.Update:
		old, ok := a.Old.(*corev1.Namespace)
		if !ok {
			return outcome{}
		}
		oldPolicy, oldErrs := policyFor(old.Labels, p.defaults)
		if len(errs) > 0 && (len(oldErrs) == 0 || !sameErrors(errs, oldErrs)) {
			return outcome{err: apierrors.NewInvalid(namespaceKind, ns.Name, errs)}
		}
		switch {
		case policy.Enforce == oldPolicy.Enforce, policy.Enforce.Level == Privileged:
			return outcome{}
		case policy.Enforce.Version == oldPolicy.Enforce.Version && strictness(policy.Enforce.Level) <= strictness(oldPolicy.Enforce.Level):
			return outcome{}
		case exempt:
			return p.exemptNamespaceWarning(ns, policy)
		}
		return outcome{warnings: p.checkPods(ctx, env, ns.Name, policy.Enforce)}
	}
	return outcome{}
}

// sameErrors compares two lists of label errors.
func sameErrors(a, b field.ErrorList) bool {
	return slices.EqualFunc(a, b, func(x, y *field.Error) bool {
		return x.Type == y.Type && x.Field == y.Field && x.BadValue == y.BadValue && x.Detail == y.Detail
	})
}

// exemptNamespaceWarning warns that an exempt namespace's labels ask for
// a policy (other than privileged or the default) that is not applied,
// naming the modes labelled.
func (p *Plugin) exemptNamespaceWarning(ns *corev1.Namespace, policy Policy) outcome {
	if policy.fullyPrivileged() || policy.equivalent(p.defaults) {
		return outcome{}
	}
	has := func(a, b string) bool {
		_, x := ns.Labels[a]
		_, y := ns.Labels[b]
		return x || y
	}
	var modes []string
	if policy.Enforce.Level != Privileged && has(EnforceLevelLabel, EnforceVersionLabel) {
		modes = append(modes, "enforce="+policy.Enforce.String())
	}
	if policy.Audit.Level != Privileged && has(AuditLevelLabel, AuditVersionLabel) {
		modes = append(modes, "audit="+policy.Audit.String())
	}
	if policy.Warn.Level != Privileged && has(WarnLevelLabel, WarnVersionLabel) {
		modes = append(modes, "warn="+policy.Warn.String())
	}
	return outcome{warnings: []string{fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored",
		ns.Name, strings.Join(modes, ", "))}}
}

// podCount is how many pods share one list of reasons, and the first of
// their names.
type podCount struct {
	first string
	n     int
}

// checkPods checks the pods of a namespace against a new enforce level
// and returns the warnings kube-apiserver gives: that the namespace has
// pods violating it, then one line per distinct list of reasons naming the
// first pod (and how many others), in order; pods of one controller after
// one of each, at most maxPodsChecked of them, within podCheckTimeout (or
// half what is left of the request) of the list, saying so when not all
// were checked.
func (p *Plugin) checkPods(ctx context.Context, env registry.Env, ns string, enforce LevelVersion) []string {
	pods, err := p.listPods(ctx, env, ns)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	// The time allowed bounds the checks, not the list (which may wait
	// for the watch cache to catch up): kube-apiserver lists from its
	// informer's cache, which never waits.
	timeout := p.podCheckTimeout
	if d, ok := ctx.Deadline(); ok {
		if half := time.Until(d) / 2; half < timeout {
			timeout = half
		}
	}
	deadline := time.Now().Add(timeout)
	pods = p.prioritize(pods)
	total := len(pods)
	if len(pods) > p.maxPodsChecked {
		pods = pods[:p.maxPodsChecked]
	}
	checked := len(pods)
	var lines []string
	counts := map[string]podCount{}
	for i, pod := range pods {
		if v := p.eval.evaluate(enforce, &pod.ObjectMeta, &pod.Spec); len(v) > 0 {
			r := reasons(v)
			c, seen := counts[r]
			if !seen {
				c.first = pod.Name
				lines = append(lines, r)
			} else if pod.Name < c.first {
				c.first = pod.Name
			}
			c.n++
			counts[r] = c
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			checked = i + 1
			break
		}
	}
	var warnings []string
	if checked < total {
		warnings = append(warnings, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(lines) > 0 {
		warnings = append(warnings, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", ns, enforce.String()))
	}
	for i, r := range lines {
		c := counts[r]
		switch c.n {
		case 1:
			lines[i] = fmt.Sprintf("%s: %s", c.first, r)
		case 2:
			lines[i] = fmt.Sprintf("%s (and 1 other pod): %s", c.first, r)
		default:
			lines[i] = fmt.Sprintf("%s (and %d other pods): %s", c.first, c.n-1, r)
		}
	}
	slices.Sort(lines)
	return append(warnings, lines...)
}

// listPods lists a namespace's pods as the server has them (shared: not
// to be modified).
func (p *Plugin) listPods(ctx context.Context, env registry.Env, ns string) ([]*corev1.Pod, error) {
	objs := env.Objects(podsGVR)
	if objs == nil {
		return nil, fmt.Errorf("pods are not served")
	}
	list, err := registry.ListRecent(ctx, objs, ns)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(list))
	for _, o := range list {
		if pod, ok := o.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// prioritize drops pods of exempt runtime classes and puts the first pod
// of each controller (and every pod without one) before the other pods of
// controllers already seen.
func (p *Plugin) prioritize(pods []*corev1.Pod) []*corev1.Pod {
	var first, rest []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		if rc := pod.Spec.RuntimeClassName; rc != nil && *rc != "" && slices.Contains(p.exemptions.RuntimeClasses, *rc) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			first = append(first, pod)
		case seen[ref.UID]:
			rest = append(rest, pod)
		default:
			seen[ref.UID] = true
			first = append(first, pod)
		}
	}
	return append(first, rest...)
}
