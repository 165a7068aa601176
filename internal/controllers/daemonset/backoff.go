package daemonset

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Kubernetes' back-off for deleting failed daemon pods: the kubelet may
// keep rejecting a pod (e.g. for lack of resources), and the controller
// must not fight it in a hot loop.
const (
	failedPodsBackoffInitial = time.Second
	failedPodsBackoffMax     = 15 * time.Minute
)

// backoff is an exponential back-off per key (DaemonSet UID and node
// name), as client-go's flowcontrol.Backoff: Next starts at initial and
// doubles up to max; an entry not touched for 2*max is forgotten.
type backoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu sync.Mutex
	// entries holds the current delay and last update per key; guarded by
	// mu.
	entries map[string]*backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

func newBackoff(c clock.PassiveClock, initial, max time.Duration) *backoff {
	return &backoff{clock: c, initial: initial, max: max, entries: map[string]*backoffEntry{}}
}

func (b *backoff) expired(e *backoffEntry, now time.Time) bool {
	return now.Sub(e.lastUpdate) > 2*b.max
}

// inBackoff reports whether key is still waiting since its last Next, and
// for how long its current delay runs.
func (b *backoff) inBackoff(key string, now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, now) {
		return false, 0
	}
	return now.Sub(e.lastUpdate) < e.delay, e.delay
}

// next moves key to its next delay (initial the first time) as of now,
// and forgets the expired entries.
func (b *backoff) next(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, e := range b.entries {
		if b.expired(e, now) {
			delete(b.entries, k)
		}
	}
	e, ok := b.entries[key]
	if !ok {
		b.entries[key] = &backoffEntry{delay: b.initial, lastUpdate: now}
		return
	}
	e.delay = min(2*e.delay, b.max)
	e.lastUpdate = now
}
