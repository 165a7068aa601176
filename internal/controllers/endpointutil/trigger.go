package endpointutil

import (
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// TriggerTimes computes the endpoints.kubernetes.io/last-change-trigger-time
// of each Service's endpoints: the earliest change, among those its
// last committed sync had not seen, that the endpoints now reflect. A pod
// changed when it is new to the Service or its readiness, deletion, IPs or
// phase differ from the last committed sync; its change time is its Ready
// condition's last transition (its creation when it has none). A
// Service's is its creation, counted at its first sync.
// Safe for concurrent use (one key is never synced twice at once).
type TriggerTimes struct {
	mu sync.Mutex
	// state holds, per Service key, what the last sync saw.
	state map[string]*serviceTriggers
}

type serviceTriggers struct {
	pods map[string]podState
}

// podState is what of a pod its endpoint shows, and when it last changed.
type podState struct {
	at      time.Time
	ready   bool
	deleted bool
	ips     string
}

func stateOf(pod *corev1.Pod) podState {
	return podState{at: podTriggerTime(pod), ready: podutil.IsPodReady(pod), deleted: pod.DeletionTimestamp != nil,
		ips: strings.Join(PodIPs(pod), ",") + "/" + string(pod.Status.Phase)}
}

// NewTriggerTimes returns an empty tracker.
func NewTriggerTimes() *TriggerTimes {
	return &TriggerTimes{state: map[string]*serviceTriggers{}}
}

// podTriggerTime is when pod last changed in a way endpoints show.
func podTriggerTime(pod *corev1.Pod) time.Time {
	if c := podutil.GetPodReadyCondition(&pod.Status); c != nil && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	return pod.CreationTimestamp.Time
}

// Seen is what one sync saw of a Service's pods, to be committed once the
// endpoints reflecting it are written.
type Seen struct {
	key   string
	state *serviceTriggers
}

// Compute returns the trigger time for svc's sync over pods (zero when
// no unseen change) and what the sync saw. Nothing is remembered until
// Commit: a sync whose write fails (a conflict, a stale cache) leaves its
// changes unseen, so its retry stamps them again rather than writing the
// endpoints without the annotation.
func (t *TriggerTimes) Compute(svc *corev1.Service, pods []*corev1.Pod) (time.Time, Seen) {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	prev, seen := t.state[key]
	t.mu.Unlock()
	next := &serviceTriggers{pods: make(map[string]podState, len(pods))}
	var min time.Time
	consider := func(at time.Time) {
		if !at.IsZero() && (min.IsZero() || at.Before(min)) {
			min = at
		}
	}
	if !seen {
		consider(svc.CreationTimestamp.Time)
	}
	for _, p := range pods {
		st := stateOf(p)
		next.pods[p.Name] = st
		if !seen {
			continue
		}
		if old, ok := prev.pods[p.Name]; !ok || old != st {
			consider(st.at)
		}
	}
	return min, Seen{key: key, state: next}
}

// Commit remembers what a sync saw: its endpoints are written, or needed
// no write.
func (t *TriggerTimes) Commit(s Seen) {
	t.mu.Lock()
	t.state[s.key] = s.state
	t.mu.Unlock()
}

// Forget drops a deleted Service's state.
func (t *TriggerTimes) Forget(namespace, name string) {
	t.mu.Lock()
	delete(t.state, namespace+"/"+name)
	t.mu.Unlock()
}
