package flowcontrol

import (
	"sync"
	"time"
)

// maxRetryAfter caps the Retry-After a rejection suggests, in seconds.
const maxRetryAfter = 32

// retryAfter suggests, per priority level, how long a rejected client
// should wait, as kube-apiserver does: it starts at 1 s, doubles (at most
// once per current value's seconds) when at least three times that many
// requests were dropped over the last that-many seconds, and shrinks by
// one second when fewer than that many were.
type retryAfter struct {
	now    func() time.Time
	mu     sync.Mutex
	levels map[string]*dropStats
}

type dropStats struct {
	// perSecond counts drops by Unix second over the last maxRetryAfter
	// seconds.
	perSecond  map[int64]int64
	current    int64 // the second being counted
	value      int64 // the suggestion, seconds
	lastRaised int64
}

func newRetryAfter(now func() time.Time) *retryAfter {
	return &retryAfter{now: now, levels: map[string]*dropStats{}}
}

// dropped records a rejection in level pl.
func (t *retryAfter) dropped(pl string) {
	sec := t.now().Unix()
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.levels[pl]
	if st == nil {
		st = &dropStats{perSecond: map[int64]int64{}, value: 1}
		t.levels[pl] = st
	}
	if sec != st.current {
		// A new second: judge the seconds before it, then count it.
		st.current = sec
		st.adjust(sec)
		for s := range st.perSecond {
			if sec-s > maxRetryAfter {
				delete(st.perSecond, s)
			}
		}
	}
	st.perSecond[sec]++
}

func (st *dropStats) adjust(now int64) {
	var drops int64
	for s, n := range st.perSecond {
		if s < now && now-s <= st.value {
			drops += n
		}
	}
	switch {
	case now-st.lastRaised >= st.value && drops >= 3*st.value:
		st.value = min(2*st.value, maxRetryAfter)
		st.lastRaised = now
	case drops < st.value && st.value > 1:
		st.value--
	}
}

// get returns the current suggestion for level pl, in seconds.
func (t *retryAfter) get(pl string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.levels[pl]; st != nil {
		return st.value
	}
	return 1
}
