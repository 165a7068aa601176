package statefulset

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// expectTTL is how long an unobserved write holds a set back (as
// Kubernetes' expectations).
const expectTTL = 5 * time.Minute

// writeKind is what a pending write waits to observe.
type writeKind int

const (
	// podCreate waits for the pod to appear in the cache.
	podCreate writeKind = iota
	// podDelete waits for the pod of that UID to be terminating or gone.
	podDelete
	// claimCreate waits for the PVC to appear in the cache.
	claimCreate
)

type pendingWrite struct {
	kind writeKind
	uid  types.UID
	at   time.Time
}

// expectations holds, per set key, the writes the controller issued that
// its caches have not shown yet, by object key ("namespace/name"). A set
// with writes pending is not acted on: its next sync would otherwise act on
// a cache that misses them (create a pod twice, delete a pod twice, count
// a deleted pod as still ready). Each write is observed by the informer
// handlers, fails (and is forgotten), or expires after expectTTL.
type expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	// bySet: set key -> object key -> write; byObj: object key -> set key.
	bySet map[string]map[string]pendingWrite
	byObj map[string]string
}

func newExpectations(clk clock.PassiveClock) *expectations {
	return &expectations{clock: clk, bySet: map[string]map[string]pendingWrite{}, byObj: map[string]string{}}
}

// expect records that the controller of setKey is about to write objKey.
func (e *expectations) expect(setKey, objKey string, kind writeKind, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.bySet[setKey]
	if m == nil {
		m = map[string]pendingWrite{}
		e.bySet[setKey] = m
	}
	m[objKey] = pendingWrite{kind: kind, uid: uid, at: e.clock.Now()}
	e.byObj[objKey] = setKey
}

// forget drops the pending write of objKey (observed, or failed); it
// returns the set key it held back, "" if none.
func (e *expectations) forget(objKey string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	setKey, ok := e.byObj[objKey]
	if !ok {
		return ""
	}
	delete(e.byObj, objKey)
	if m := e.bySet[setKey]; m != nil {
		delete(m, objKey)
		if len(m) == 0 {
			delete(e.bySet, setKey)
		}
	}
	return setKey
}

// observed is called with what the cache now shows of objKey: present
// (with uid, terminating or not) or gone. It forgets the pending write the
// observation satisfies and returns the key of the set it held back, ""
// if none.
func (e *expectations) observed(objKey string, present bool, uid types.UID, terminating bool) string {
	e.mu.Lock()
	setKey, ok := e.byObj[objKey]
	var w pendingWrite
	if ok {
		w = e.bySet[setKey][objKey]
	}
	e.mu.Unlock()
	if !ok {
		return ""
	}
	switch w.kind {
	case podCreate, claimCreate:
		if !present {
			return ""
		}
	case podDelete:
		if present && uid == w.uid && !terminating {
			return ""
		}
	}
	return e.forget(objKey)
}

// satisfied reports whether setKey has no unexpired pending write.
func (e *expectations) satisfied(setKey string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	for _, w := range e.bySet[setKey] {
		if now.Sub(w.at) <= expectTTL {
			return false
		}
	}
	return true
}

// deleteSet forgets everything pending for setKey.
func (e *expectations) deleteSet(setKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for objKey := range e.bySet[setKey] {
		delete(e.byObj, objKey)
	}
	delete(e.bySet, setKey)
}
