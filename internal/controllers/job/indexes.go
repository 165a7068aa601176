package job

import (
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// unknownIndex marks a pod without a valid completion index.
const unknownIndex = -1

// interval is the closed range of completion indexes [first, last].
type interval struct{ first, last int }

// intervals is a sorted list of disjoint, non-adjacent intervals: the form
// of status.completedIndexes and status.failedIndexes ("1,3-5,7").
type intervals []interval

// parseIntervals reads s, keeping only indexes below completions. A
// malformed element ends the parse: what was read so far is kept.
func parseIntervals(s string, completions int) intervals {
	var out intervals
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return out
		}
		last := first
		if found {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return out
			}
		}
		if first >= completions {
			break
		}
		out = out.add(first, min(last, completions-1))
	}
	return out
}

// add returns the intervals with [first, last] merged in.
func (iv intervals) add(first, last int) intervals {
	out := make(intervals, 0, len(iv)+1)
	inserted := false
	cur := interval{first, last}
	for _, x := range iv {
		switch {
		case x.last+1 < cur.first:
			out = append(out, x)
		case cur.last+1 < x.first:
			if !inserted {
				out = append(out, cur)
				inserted = true
			}
			out = append(out, x)
		default:
			cur = interval{min(cur.first, x.first), max(cur.last, x.last)}
		}
	}
	if !inserted {
		out = append(out, cur)
	}
	return out
}

// withIndexes returns the intervals with every index of ixs added.
func (iv intervals) withIndexes(ixs []int) intervals {
	for _, ix := range ixs {
		iv = iv.add(ix, ix)
	}
	return iv
}

// has reports whether ix is in one of the intervals.
func (iv intervals) has(ix int) bool {
	i := sort.Search(len(iv), func(i int) bool { return iv[i].last >= ix })
	return i < len(iv) && iv[i].first <= ix
}

// total is the number of indexes covered.
func (iv intervals) total() int {
	n := 0
	for _, x := range iv {
		n += x.last - x.first + 1
	}
	return n
}

// String formats the intervals as the Job status does.
func (iv intervals) String() string {
	var b strings.Builder
	for i, x := range iv {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x.first))
		if x.last > x.first {
			sep := "-"
			if x.last == x.first+1 {
				sep = ","
			}
			b.WriteString(sep)
			b.WriteString(strconv.Itoa(x.last))
		}
	}
	return b.String()
}

// completionIndex returns the pod's completion index annotation, or
// unknownIndex.
func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownIndex
	}
	return i
}

// validIndex returns the pod's completion index if it is below
// completions, else unknownIndex.
func validIndex(p *corev1.Pod, completions int32) int {
	if ix := completionIndex(p); ix != unknownIndex && ix < int(completions) {
		return ix
	}
	return unknownIndex
}

// succeededIndexes returns the completed indexes recorded in the status
// and those plus the indexes of succeeded pods that still carry the
// tracking finalizer (not yet counted).
func succeededIndexes(job *batchv1.Job, pods []*corev1.Pod) (prev, all intervals) {
	completions := int(*job.Spec.Completions)
	prev = parseIntervals(job.Status.CompletedIndexes, completions)
	var fresh []int
	for _, p := range pods {
		if ix := validIndex(p, *job.Spec.Completions); ix != unknownIndex &&
			p.Status.Phase == corev1.PodSucceeded && hasTrackingFinalizer(p) {
			fresh = append(fresh, ix)
		}
	}
	return prev, prev.withIndexes(fresh)
}

// failedIndexes returns the failed indexes (backoffLimitPerIndex): those
// recorded in the status plus the indexes of failed pods, not yet
// counted, whose failure exhausts the index's budget or matches a
// FailIndex rule.
func failedIndexes(job *batchv1.Job, pods []*corev1.Pod) intervals {
	out := intervals{}
	if job.Status.FailedIndexes != nil {
		out = parseIntervals(*job.Status.FailedIndexes, int(*job.Spec.Completions))
	}
	var fresh []int
	for _, p := range pods {
		ix := validIndex(p, *job.Spec.Completions)
		if ix == unknownIndex || !hasTrackingFinalizer(p) || !indexFailed(job, p) {
			continue
		}
		fresh = append(fresh, ix)
	}
	return out.withIndexes(fresh)
}

// indexFailed reports whether p's failure fails its index.
func indexFailed(job *batchv1.Job, p *corev1.Pod) bool {
	if !isPodFailed(p, job) {
		return false
	}
	counted := true
	if job.Spec.PodFailurePolicy != nil {
		m := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
		if m.action != nil && *m.action == batchv1.PodFailurePolicyActionFailIndex {
			return true
		}
		counted = m.countFailed
	}
	return counted && indexFailureCount(p) >= *job.Spec.BackoffLimitPerIndex
}

// indexFailureCount and indexIgnoredFailureCount read the pod's
// per-index failure annotations (0 when absent or invalid).
func indexFailureCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexFailureCountAnnotation)
}

func indexIgnoredFailureCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

func annotationInt32(p *corev1.Pod, key string) int32 {
	v, ok := p.Annotations[key]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// nextIndexFailureCounts returns the failure annotations of the pod that
// replaces failed (nil: a first pod).
func nextIndexFailureCounts(job *batchv1.Job, failed *corev1.Pod) (count, ignored int32) {
	if failed == nil {
		return 0, 0
	}
	count, ignored = indexFailureCount(failed), indexIgnoredFailureCount(failed)
	if job.Spec.PodFailurePolicy != nil && !matchPodFailurePolicy(job.Spec.PodFailurePolicy, failed).countFailed {
		return count, ignored + 1
	}
	return count + 1, ignored
}

// podsAwaitingReplacement returns, per index that is neither succeeded,
// failed nor active, its latest failed pod that still carries the
// finalizer: its removal waits until its replacement exists, so that the
// replacement inherits its failure count.
func podsAwaitingReplacement(c *syncCtx) map[int]*corev1.Pod {
	active := sets.New[int]()
	for _, p := range c.activePods {
		active.Insert(completionIndex(p))
	}
	out := map[int]*corev1.Pod{}
	for _, p := range c.uncountedCandidates(nil) {
		if !isPodFailed(p, c.job) {
			continue
		}
		ix := completionIndex(p)
		if c.succeededIdx.has(ix) || c.failedIdx.has(ix) || active.Has(ix) {
			continue
		}
		last, ok := out[ix]
		if !ok || (indexFailureCount(last)+indexIgnoredFailureCount(last) <= indexFailureCount(p)+indexIgnoredFailureCount(p) &&
			!finishedTime(p).Before(finishedTime(last))) {
			out[ix] = p
		}
	}
	return out
}

// firstPendingIndexes returns up to count indexes below completions that
// are not succeeded, failed, or held by an active pod (nor, when only
// failed pods are replaced, by a terminating one), smallest first.
func firstPendingIndexes(c *syncCtx, count int) []int {
	completions := int(*c.job.Spec.Completions)
	busy := sets.New[int]()
	for _, p := range c.activePods {
		if ix := validIndex(p, *c.job.Spec.Completions); ix != unknownIndex {
			busy.Insert(ix)
		}
	}
	if onlyReplaceFailedPods(c.job) {
		for _, p := range c.pods {
			if isTerminating(p) {
				busy.Insert(completionIndex(p))
			}
		}
	}
	var out []int
	for ix := 0; ix < completions && len(out) < count; ix++ {
		if busy.Has(ix) || c.succeededIdx.has(ix) || c.failedIdx.has(ix) {
			continue
		}
		out = append(out, ix)
	}
	return out
}
