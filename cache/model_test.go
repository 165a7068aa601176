package cache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

var errPoison = errors.New("poisoned object")

// tierIndexFunc fails on poisoned pods, so the model test also covers
// failing writes.
func tierIndexFunc(p *corev1.Pod) ([]string, error) {
	if p.Labels["poison"] == "true" {
		return nil, errPoison
	}
	if t := p.Labels["tier"]; t != "" {
		return []string{t}, nil
	}
	return nil, nil
}

// model is the trivial reference: a map, with indexes recomputed on demand.
type model struct {
	objs     map[string]*corev1.Pod
	indexers Indexers[*corev1.Pod]
}

func (m *model) poisoned(pods ...*corev1.Pod) bool {
	_, ok := m.indexers["tier"]
	return ok && anyPoison(pods)
}

func anyPoison(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if p.Labels["poison"] == "true" {
			return true
		}
	}
	return false
}

func (m *model) index(name string) map[string][]string {
	out := map[string][]string{}
	for key, p := range m.objs {
		vs, _ := m.indexers[name](p)
		for _, v := range vs {
			if !slices.Contains(out[v], key) {
				out[v] = append(out[v], key)
			}
		}
	}
	for _, keys := range out {
		slices.Sort(keys)
	}
	return out
}

type gen struct{ r *rand.Rand }

func (g gen) pod() *corev1.Pod {
	ns := []string{"", "a", "b"}[g.r.IntN(3)]
	var opts []podOpt
	if g.r.IntN(4) != 0 {
		opts = append(opts, onNode(fmt.Sprintf("n%d", g.r.IntN(4))))
	}
	var owners []string
	for i := range g.r.IntN(3) {
		owners = append(owners, fmt.Sprintf("u%d", (i+g.r.IntN(4))%4))
	}
	opts = append(opts, ownedBy(owners...))
	switch g.r.IntN(10) {
	case 0:
		opts = append(opts, labeled("poison", "true"))
	case 1, 2, 3:
		opts = append(opts, labeled("tier", fmt.Sprintf("t%d", g.r.IntN(2))))
	}
	return newPod(ns, fmt.Sprintf("p%d", g.r.IntN(8)), opts...)
}

func TestIndexerAgainstModel(t *testing.T) {
	failed := 0
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			failed += runModel(t, seed, 200)
		})
	}
	if failed == 0 {
		t.Fatal("no write was refused: the failing-index path went unexercised")
	}
}

// runModel runs steps random operations against both the indexer and the
// model, comparing them after each, and returns how many writes the
// indexer refused.
func runModel(t *testing.T, seed uint64, steps int) (refused int) {
	g := gen{rand.New(rand.NewPCG(seed, seed^0x5eed))}
	s := NewObjectIndexer(podIndexers())
	m := &model{objs: map[string]*corev1.Pod{}, indexers: Indexers[*corev1.Pod]{
		NamespaceIndex: MetaNamespaceIndexFunc[*corev1.Pod], nodeIndex: nodeIndexFunc, ownerIndex: ownerIndexFunc,
	}}
	for step := range steps {
		var err error
		var desc string
		switch k := g.r.IntN(20); {
		case k < 10:
			p := g.pod()
			desc = "add " + p.Namespace + "/" + p.Name
			if g.r.IntN(2) == 0 {
				err = s.Add(p)
			} else {
				err = s.Update(p)
			}
			if !m.poisoned(p) {
				m.objs[ObjectKey(p.Namespace, p.Name)] = p
			}
		case k < 16:
			p := g.pod()
			desc = "delete " + p.Namespace + "/" + p.Name
			err = s.Delete(p)
			delete(m.objs, ObjectKey(p.Namespace, p.Name))
		case k < 19:
			list := make([]*corev1.Pod, g.r.IntN(10))
			for i := range list {
				list[i] = g.pod()
			}
			desc = fmt.Sprintf("replace with %d", len(list))
			err = s.Replace(list, "")
			if !m.poisoned(list...) {
				m.objs = map[string]*corev1.Pod{}
				for _, p := range list {
					m.objs[ObjectKey(p.Namespace, p.Name)] = p
				}
			}
		default:
			desc = "add tier index"
			err = s.AddIndexers(Indexers[*corev1.Pod]{"tier": tierIndexFunc})
			_, dup := m.indexers["tier"]
			refuse := dup || anyPoison(slices.Collect(maps.Values(m.objs)))
			if refuse != (err != nil) {
				t.Fatalf("seed %d step %d: AddIndexers = %v, model refuses: %v", seed, step, err, refuse)
			}
			if !refuse {
				m.indexers["tier"] = tierIndexFunc
			}
			err = nil
		}
		if err != nil && !errors.Is(err, errPoison) {
			t.Fatalf("seed %d step %d %s: %v", seed, step, desc, err)
		}
		if err != nil {
			refused++
		}
		compare(t, s, m, fmt.Sprintf("seed %d step %d (%s)", seed, step, desc))
	}
	return refused
}

func compare(t *testing.T, s *ThreadSafeIndexer[*corev1.Pod], m *model, at string) {
	t.Helper()
	keys := s.ListKeys()
	slices.Sort(keys)
	if want := slices.Sorted(maps.Keys(m.objs)); !slices.Equal(keys, want) {
		t.Fatalf("%s: keys = %v, want %v", at, keys, want)
	}
	for key, want := range m.objs {
		if got, ok, _ := s.GetByKey(key); !ok || got != want {
			t.Fatalf("%s: GetByKey(%q) = %p %v, want %p", at, key, got, ok, want)
		}
	}
	if got, want := s.IndexNames(), slices.Sorted(maps.Keys(m.indexers)); !slices.Equal(got, want) {
		t.Fatalf("%s: indexes = %v, want %v", at, got, want)
	}
	for name := range m.indexers {
		if got, want := indexDump(s, name), m.index(name); !maps.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s: index %q = %v, want %v", at, name, got, want)
		}
	}
	checkInvariants(t, s)
}
