package endpointslice

import (
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
)

// serviceIndex files managed slices under their Service's key.
const serviceIndex = "endpointslice.setpoint.dev/service"

func addServiceIndex(inf *informer.Informer[*discoveryv1.EndpointSlice]) error {
	for _, n := range inf.Indexer().IndexNames() {
		if n == serviceIndex {
			return nil
		}
	}
	return inf.Indexer().AddIndexers(cache.Indexers[*discoveryv1.EndpointSlice]{serviceIndex: func(s *discoveryv1.EndpointSlice) ([]string, error) {
		name := s.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			return nil, nil
		}
		return []string{s.Namespace + "/" + name}, nil
	}})
}

// deletedGen marks a slice the controller deleted.
const deletedGen = -1

// tracker remembers, per Service, the slices the controller wrote (the
// generation each write produced) or deleted and not yet seen so in the
// cache. A sync on a cache behind them would act on stale slices
// (creating duplicates, or conflicting), so it waits.
type tracker struct {
	mu   sync.Mutex
	want map[types.NamespacedName]map[string]int64
}

func newTracker() *tracker { return &tracker{want: map[types.NamespacedName]map[string]int64{}} }

// expect records a write (gen >= 1) or deletion (deletedGen) of a slice.
func (t *tracker) expect(svc types.NamespacedName, slice string, gen int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.want[svc]
	if m == nil {
		m = map[string]int64{}
		t.want[svc] = m
	}
	m[slice] = gen
}

// observed drops the expectation a cached slice satisfies.
func (t *tracker) observed(svc types.NamespacedName, s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g, ok := t.want[svc][s.Name]; ok && g != deletedGen && s.Generation >= g {
		t.drop(svc, s.Name)
	}
}

// deleted drops any expectation of a slice that is gone.
func (t *tracker) deleted(svc types.NamespacedName, slice string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop(svc, slice)
}

func (t *tracker) drop(svc types.NamespacedName, slice string) {
	if m := t.want[svc]; m != nil {
		delete(m, slice)
		if len(m) == 0 {
			delete(t.want, svc)
		}
	}
}

// stale says whether cached (svc's slices in the cache) is behind the
// controller's own writes. Expectations the cache satisfies are dropped
// here too (an event may have come before its expectation was recorded).
func (t *tracker) stale(svc types.NamespacedName, cached []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.want[svc]
	if len(m) == 0 {
		return false
	}
	byName := make(map[string]*discoveryv1.EndpointSlice, len(cached))
	for _, s := range cached {
		byName[s.Name] = s
	}
	behind := false
	for name, g := range m {
		s, ok := byName[name]
		switch {
		case g == deletedGen && ok, g != deletedGen && (!ok || s.Generation < g):
			behind = true
		default:
			t.drop(svc, name)
		}
	}
	return behind
}

// forget drops a deleted Service's expectations.
func (t *tracker) forget(svc types.NamespacedName) {
	t.mu.Lock()
	delete(t.want, svc)
	t.mu.Unlock()
}
