package podsecurity

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Violation is one check a pod fails: the reason ("privileged") and the
// detail naming what fails it (`container "c" must not set
// securityContext.privileged=true`).
type Violation struct {
	Reason, Detail string
}

// checkFunc returns the violation of a pod's metadata and spec, or nil.
type checkFunc func(meta *metav1.ObjectMeta, spec *corev1.PodSpec) *Violation

// check is one rule of a standard, in its versions.
type check struct {
	id    string
	level Level
	// versions are in increasing order of since; each applies from its
	// version until the next one's.
	versions []versionedCheck
}

type versionedCheck struct {
	since Version
	fn    checkFunc
	// overrides are the baseline checks this restricted one replaces in
	// the restricted level from this version on.
	overrides []string
}

// evaluator holds the checks each level runs at each version v1.0 to
// v1.<max>, in the order kube-apiserver runs (and reports) them: baseline
// checks by id, then restricted checks by id.
type evaluator struct {
	max                  Version
	baseline, restricted [][]checkFunc
}

// newEvaluator builds the evaluator of the given checks.
func newEvaluator(checks []check) *evaluator {
	e := &evaluator{}
	for _, c := range checks {
		if last := c.versions[len(c.versions)-1].since; e.max.before(last) {
			e.max = last
		}
	}
	ordered := slices.Clone(checks)
	slices.SortStableFunc(ordered, func(a, b check) int {
		if a.level != b.level {
			return strictness(a.level) - strictness(b.level)
		}
		return strings.Compare(a.id, b.id)
	})
	for minor := 0; minor <= e.max.minor; minor++ {
		e.baseline = append(e.baseline, atVersion(ordered, V1(minor), false))
		e.restricted = append(e.restricted, atVersion(ordered, V1(minor), true))
	}
	return e
}

// atVersion lists the checks a level runs at version v: the baseline
// checks, plus for restricted the restricted checks less the baseline ones
// they override.
func atVersion(ordered []check, v Version, restricted bool) []checkFunc {
	overridden := map[string]bool{}
	if restricted {
		for _, c := range ordered {
			if vc := c.at(v); vc != nil && c.level == Restricted {
				for _, id := range vc.overrides {
					overridden[id] = true
				}
			}
		}
	}
	var fns []checkFunc
	for _, c := range ordered {
		if c.level == Restricted && !restricted || overridden[c.id] {
			continue
		}
		if vc := c.at(v); vc != nil {
			fns = append(fns, vc.fn)
		}
	}
	return fns
}

// at returns the version of c that applies at v (nil before its first).
func (c check) at(v Version) *versionedCheck {
	var found *versionedCheck
	for i := range c.versions {
		if v.before(c.versions[i].since) {
			break
		}
		found = &c.versions[i]
	}
	return found
}

// evaluate runs the checks of lv on a pod and returns its violations in
// order (none for privileged). Versions newer than the newest check, and
// latest, run the newest checks.
func (e *evaluator) evaluate(lv LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []Violation {
	if lv.Level == Privileged {
		return nil
	}
	v := lv.Version
	if e.max.before(v) {
		v = e.max
	}
	fns := e.restricted[v.minor]
	if lv.Level == Baseline {
		fns = e.baseline[v.minor]
	}
	var out []Violation
	for _, fn := range fns {
		if r := fn(meta, spec); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// reasons joins the violations' reasons ("privileged, hostPort").
func reasons(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Reason
	}
	return strings.Join(parts, ", ")
}

// details joins the violations' reasons with their details in
// parentheses ("privileged (container "c" must not set …), hostPort (…)").
func details(vs []Violation) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Reason)
		if v.Detail != "" {
			b.WriteString(" (" + v.Detail + ")")
		}
	}
	return b.String()
}

// allChecks are the checks of the Pod Security Standards as of v1.37.
func allChecks() []check {
	return append(baselineChecks(), restrictedChecks()...)
}

// visitContainers calls fn on every init, regular and ephemeral container.
func visitContainers(spec *corev1.PodSpec, fn func(c *corev1.Container)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// quoted joins items as "a", "b".
func quoted(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return `"` + strings.Join(items, `", "`) + `"`
}

// plural picks the singular for one item, else the plural.
func plural(singular, pluralForm string, n int) string {
	if n == 1 {
		return singular
	}
	return pluralForm
}

// containers is `container "a"` or `containers "a", "b"`.
func containers(names []string) string {
	return plural("container", "containers", len(names)) + " " + quoted(names)
}

// userNamespaced: the pod runs in its own user namespace (hostUsers:
// false), which relaxes some checks from v1.35.
func userNamespaced(spec *corev1.PodSpec) bool {
	return spec.HostUsers != nil && !*spec.HostUsers
}

// windows: the pod declares the Windows OS, which exempts it from some
// restricted checks from v1.25.
func windows(spec *corev1.PodSpec) bool {
	return spec.OS != nil && spec.OS.Name == corev1.Windows
}

// sortedSet returns the distinct strings of m in order.
func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
