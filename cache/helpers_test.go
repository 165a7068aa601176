package cache

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	nodeIndex  = "node"
	ownerIndex = "owner"
)

func nodeIndexFunc(p *corev1.Pod) ([]string, error) {
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

func ownerIndexFunc(p *corev1.Pod) ([]string, error) {
	var out []string
	for _, ref := range p.OwnerReferences {
		out = append(out, string(ref.UID))
	}
	return out, nil
}

func podIndexers() Indexers[*corev1.Pod] {
	return Indexers[*corev1.Pod]{nodeIndex: nodeIndexFunc, ownerIndex: ownerIndexFunc}
}

type podOpt func(*corev1.Pod)

func onNode(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func ownedBy(uids ...string) podOpt {
	return func(p *corev1.Pod) {
		for _, u := range uids {
			p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{UID: types.UID(u), Name: u})
		}
	}
}

func labeled(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func rv(v string) podOpt { return func(p *corev1.Pod) { p.ResourceVersion = v } }

func newPod(ns, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func sortedKeys[T any](s *ThreadSafeIndexer[T], indexName, value string) []string {
	keys, err := s.IndexKeys(indexName, value)
	if err != nil {
		panic(fmt.Sprintf("IndexKeys(%q): %v", indexName, err))
	}
	slices.Sort(keys)
	return keys
}

// indexDump returns value -> sorted keys for one index, read through the
// public API.
func indexDump[T any](s *ThreadSafeIndexer[T], indexName string) map[string][]string {
	out := map[string][]string{}
	for _, v := range s.ListIndexFuncValues(indexName) {
		out[v] = sortedKeys(s, indexName, v)
	}
	return out
}

// checkInvariants verifies the internal index structures against values
// recomputed from the stored objects, and that no empty set remains.
func checkInvariants[T any](t *testing.T, s *ThreadSafeIndexer[T]) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ix := range s.indexes {
		want := map[string]map[string]struct{}{}
		for key, e := range s.items {
			vs, err := ix.fn(e.obj)
			if err != nil {
				t.Fatalf("index %q on %q: %v", ix.name, key, err)
			}
			for _, v := range vs {
				if want[v] == nil {
					want[v] = map[string]struct{}{}
				}
				want[v][key] = struct{}{}
			}
		}
		got := map[string]map[string]struct{}{}
		for v, set := range ix.byValue {
			if len(set) == 0 {
				t.Fatalf("index %q keeps an empty set for %q", ix.name, v)
			}
			got[v] = map[string]struct{}{}
			for key, obj := range set {
				got[v][key] = struct{}{}
				if e, ok := s.items[key]; !ok || any(e.obj) != any(obj) {
					t.Fatalf("index %q value %q holds a stale object for %q", ix.name, v, key)
				}
			}
		}
		if !maps.EqualFunc(want, got, func(a, b map[string]struct{}) bool { return maps.Equal(a, b) }) {
			t.Fatalf("index %q = %v, recomputed %v", ix.name, got, want)
		}
	}
}
