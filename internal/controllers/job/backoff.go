package job

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// Kubernetes' pod failure back-off: 10 s after the first failure,
// doubling per consecutive failure, at most 10 minutes.
const (
	DefaultPodFailureBackoff = 10 * time.Second
	MaxPodFailureBackoff     = 10 * time.Minute
)

// backoffRecord is, per Job, the failures since the last success and the
// finish time of the latest one.
type backoffRecord struct {
	failures    int32
	lastFailure *time.Time
}

// backoffStore keeps the records in memory (a restarted controller starts
// without them, as Kubernetes' does).
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

func (s *backoffStore) get(key string) backoffRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[key]
}

func (s *backoffStore) set(key string, r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key] = r
}

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// next returns the record after the newly finished pods: a success resets
// the count to the failures that finished after the last success.
func (r backoffRecord) next(succeeded, failed []*corev1.Pod) backoffRecord {
	sortByFinishedTime(succeeded)
	sortByFinishedTime(failed)
	if len(succeeded) == 0 {
		if len(failed) == 0 {
			return r
		}
		t := finishedTime(failed[len(failed)-1])
		return backoffRecord{failures: r.failures + int32(len(failed)), lastFailure: &t}
	}
	out := backoffRecord{}
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if out.lastFailure == nil {
			out.lastFailure = &t
		}
		out.failures++
	}
	return out
}

// remaining is how long pod creation still waits.
func (r backoffRecord) remaining(clk clock.PassiveClock) time.Duration {
	return remainingBackoff(clk, r.failures, r.lastFailure)
}

func remainingBackoff(clk clock.PassiveClock, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	d := DefaultPodFailureBackoff
	for i := int32(1); i < failures; i++ {
		d *= 2
		if d >= MaxPodFailureBackoff {
			d = MaxPodFailureBackoff
			break
		}
	}
	elapsed := clk.Since(*last)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}

// remainingForIndex is the back-off of an index whose last failed pod is
// last (backoffLimitPerIndex).
func remainingForIndex(clk clock.PassiveClock, last *corev1.Pod) time.Duration {
	if last == nil {
		return 0
	}
	t := finishedTime(last)
	return remainingBackoff(clk, indexFailureCount(last)+indexIgnoredFailureCount(last)+1, &t)
}

func sortByFinishedTime(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return finishedTime(pods[i]).Before(finishedTime(pods[j])) })
}

// finishedTime is when p finished: the latest finishedAt of its
// containers if all terminated, else when it became not Ready, else its
// deletion time less the grace period, else its creation time.
func finishedTime(p *corev1.Pod) time.Time {
	if t := containersFinished(p); t != nil {
		return *t
	}
	if c := podutil.GetPodReadyCondition(&p.Status); c != nil && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	if p.DeletionTimestamp != nil {
		grace := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		return p.DeletionTimestamp.Add(-time.Duration(grace) * time.Second)
	}
	return p.CreationTimestamp.Time
}

func containersFinished(p *corev1.Pod) *time.Time {
	var latest *time.Time
	for _, cs := range p.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			return nil
		}
		if latest == nil || latest.Before(t.FinishedAt.Time) {
			latest = &t.FinishedAt.Time
		}
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if !sidecars[cs.Name] {
			continue
		}
		t := cs.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			return nil
		}
		if latest == nil || latest.Before(t.FinishedAt.Time) {
			latest = &t.FinishedAt.Time
		}
	}
	return latest
}
