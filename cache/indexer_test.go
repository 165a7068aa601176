package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

type op struct {
	kind string // add, update, delete, replace
	pods []*corev1.Pod
}

func add(p *corev1.Pod) op      { return op{kind: "add", pods: []*corev1.Pod{p}} }
func update(p *corev1.Pod) op   { return op{kind: "update", pods: []*corev1.Pod{p}} }
func del(p *corev1.Pod) op      { return op{kind: "delete", pods: []*corev1.Pod{p}} }
func repl(ps ...*corev1.Pod) op { return op{kind: "replace", pods: ps} }

func (o op) apply(t *testing.T, s *ThreadSafeIndexer[*corev1.Pod]) {
	t.Helper()
	var err error
	switch o.kind {
	case "add":
		err = s.Add(o.pods[0])
	case "update":
		err = s.Update(o.pods[0])
	case "delete":
		err = s.Delete(o.pods[0])
	case "replace":
		err = s.Replace(o.pods, "1")
	}
	if err != nil {
		t.Fatalf("%s: %v", o.kind, err)
	}
}

func TestIndexMaintenance(t *testing.T) {
	type want map[string]map[string][]string // index -> value -> keys
	tests := []struct {
		name string
		ops  []op
		keys []string
		want want
	}{{
		name: "add files under every index",
		ops:  []op{add(newPod("a", "p1", onNode("n1"), ownedBy("u1", "u2")))},
		keys: []string{"a/p1"},
		want: want{NamespaceIndex: {"a": {"a/p1"}}, nodeIndex: {"n1": {"a/p1"}}, ownerIndex: {"u1": {"a/p1"}, "u2": {"a/p1"}}},
	}, {
		name: "update moves between values and drops the emptied one",
		ops: []op{
			add(newPod("a", "p1", onNode("n1"), ownedBy("u1"))),
			add(newPod("a", "p2", onNode("n1"))),
			update(newPod("a", "p1", onNode("n2"), ownedBy("u2"))),
		},
		keys: []string{"a/p1", "a/p2"},
		want: want{NamespaceIndex: {"a": {"a/p1", "a/p2"}}, nodeIndex: {"n1": {"a/p2"}, "n2": {"a/p1"}}, ownerIndex: {"u2": {"a/p1"}}},
	}, {
		name: "update to no value leaves the index",
		ops:  []op{add(newPod("a", "p1", onNode("n1"))), update(newPod("a", "p1"))},
		keys: []string{"a/p1"},
		want: want{NamespaceIndex: {"a": {"a/p1"}}, nodeIndex: {}, ownerIndex: {}},
	}, {
		name: "delete removes every entry and empty sets",
		ops: []op{
			add(newPod("a", "p1", onNode("n1"), ownedBy("u1"))),
			add(newPod("b", "p1", onNode("n1"))),
			del(newPod("a", "p1")),
		},
		keys: []string{"b/p1"},
		want: want{NamespaceIndex: {"b": {"b/p1"}}, nodeIndex: {"n1": {"b/p1"}}, ownerIndex: {}},
	}, {
		name: "delete of a missing object is a no-op",
		ops:  []op{add(newPod("a", "p1")), del(newPod("a", "zz"))},
		keys: []string{"a/p1"},
		want: want{NamespaceIndex: {"a": {"a/p1"}}, nodeIndex: {}, ownerIndex: {}},
	}, {
		name: "duplicate values are filed once",
		ops:  []op{add(newPod("a", "p1", ownedBy("u1", "u1", "u1")))},
		keys: []string{"a/p1"},
		want: want{NamespaceIndex: {"a": {"a/p1"}}, nodeIndex: {}, ownerIndex: {"u1": {"a/p1"}}},
	}, {
		name: "replace rebuilds indexes from the list",
		ops: []op{
			add(newPod("a", "p1", onNode("n1"))),
			add(newPod("a", "p2", onNode("n2"))),
			repl(newPod("a", "p2", onNode("n3")), newPod("c", "p3", onNode("n3"))),
		},
		keys: []string{"a/p2", "c/p3"},
		want: want{NamespaceIndex: {"a": {"a/p2"}, "c": {"c/p3"}}, nodeIndex: {"n3": {"a/p2", "c/p3"}}, ownerIndex: {}},
	}, {
		name: "cluster-scoped keys",
		ops:  []op{add(newPod("", "x", onNode("n1")))},
		keys: []string{"x"},
		want: want{NamespaceIndex: {"": {"x"}}, nodeIndex: {"n1": {"x"}}, ownerIndex: {}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewObjectIndexer(podIndexers())
			for _, o := range tc.ops {
				o.apply(t, s)
			}
			checkInvariants(t, s)
			keys := s.ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, tc.keys) {
				t.Fatalf("keys = %v, want %v", keys, tc.keys)
			}
			for name, wantIdx := range tc.want {
				if got := indexDump(s, name); !maps.EqualFunc(got, wantIdx, slices.Equal) {
					t.Errorf("index %q = %v, want %v", name, got, wantIdx)
				}
			}
		})
	}
}

func TestFailedWritesChangeNothing(t *testing.T) {
	boom := errors.New("boom")
	failOn := func(p *corev1.Pod) ([]string, error) {
		if p.Labels["fail"] == "yes" {
			return nil, boom
		}
		return []string{"ok"}, nil
	}
	s := NewObjectIndexer(Indexers[*corev1.Pod]{"f": failOn})
	if err := s.Add(newPod("a", "p1", onNode("n1"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(newPod("a", "p1", labeled("fail", "yes"))); !errors.Is(err, boom) {
		t.Fatalf("Add with failing index = %v, want boom", err)
	}
	if err := s.Replace([]*corev1.Pod{newPod("a", "p9"), newPod("a", "p2", labeled("fail", "yes"))}, "2"); !errors.Is(err, boom) {
		t.Fatalf("Replace with failing index = %v, want boom", err)
	}
	if err := s.Add(newPod("a", "")); err == nil {
		t.Fatal("Add of a nameless object succeeded")
	}
	got, ok, _ := s.GetByKey("a/p1")
	if !ok || got.Spec.NodeName != "n1" || s.Len() != 1 {
		t.Fatalf("store changed by failed writes: %v %v len=%d", got, ok, s.Len())
	}
	checkInvariants(t, s)
	if err := s.AddIndexers(Indexers[*corev1.Pod]{"f": failOn}); err == nil {
		t.Fatal("AddIndexers accepted a duplicate name")
	}
}

func TestQueriesAndAddIndexers(t *testing.T) {
	s := NewObjectIndexer[*corev1.Pod](nil)
	for _, p := range []*corev1.Pod{
		newPod("a", "p1", onNode("n1"), ownedBy("u1")),
		newPod("a", "p2", onNode("n2"), ownedBy("u1", "u2")),
		newPod("b", "p3", onNode("n1"), ownedBy("u2")),
	} {
		if err := s.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ByIndex(nodeIndex, "n1"); err == nil {
		t.Fatal("ByIndex on a missing index succeeded")
	}
	if vs := s.ListIndexFuncValues(nodeIndex); len(vs) != 0 {
		t.Fatalf("values of a missing index = %v", vs)
	}
	if err := s.AddIndexers(podIndexers()); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if got := s.IndexNames(); !slices.Equal(got, []string{NamespaceIndex, nodeIndex, ownerIndex}) {
		t.Fatalf("IndexNames = %v", got)
	}
	if got := sortedKeys(s, nodeIndex, "n1"); !slices.Equal(got, []string{"a/p1", "b/p3"}) {
		t.Fatalf("node n1 = %v", got)
	}
	objs, err := s.Index(ownerIndex, newPod("x", "probe", ownedBy("u1", "u2")))
	if err != nil || len(objs) != 3 {
		t.Fatalf("Index by owners u1,u2 = %d objects, %v; want 3", len(objs), err)
	}
	byNS, err := s.ByIndex(NamespaceIndex, "a")
	if err != nil || len(byNS) != 2 {
		t.Fatalf("ByIndex(namespace a) = %d, %v", len(byNS), err)
	}
	// After AddIndexers, later writes maintain the new index too.
	if err := s.Update(newPod("a", "p1", onNode("n2"))); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	if got := sortedKeys(s, nodeIndex, "n2"); !slices.Equal(got, []string{"a/p1", "a/p2"}) {
		t.Fatalf("node n2 = %v", got)
	}
	if got, ok, err := s.Get(newPod("a", "p1")); err != nil || !ok || got.Spec.NodeName != "n2" {
		t.Fatalf("Get = %v %v %v", got, ok, err)
	}
	if len(s.List()) != 3 {
		t.Fatalf("List len = %d", len(s.List()))
	}
}

func TestSplitKey(t *testing.T) {
	for key, want := range map[string][2]string{"a/b": {"a", "b"}, "b": {"", "b"}} {
		ns, name, err := SplitKey(key)
		if err != nil || ns != want[0] || name != want[1] || ObjectKey(ns, name) != key {
			t.Errorf("SplitKey(%q) = %q %q %v", key, ns, name, err)
		}
	}
	for _, bad := range []string{"", "/", "a/", "/b", "a/b/c"} {
		if _, _, err := SplitKey(bad); err == nil {
			t.Errorf("SplitKey(%q) succeeded", bad)
		}
	}
}

// TestIndexerConcurrentWritersAndReaders hammers one indexer from several
// writers and readers; run with -race. Afterwards the indexes must match
// the stored objects exactly.
func TestIndexerConcurrentWritersAndReaders(t *testing.T) {
	s := NewObjectIndexer(podIndexers())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				p := newPod(fmt.Sprintf("ns%d", i%3), fmt.Sprintf("p%d", i%40), onNode(fmt.Sprintf("n%d", (i+w)%5)), ownedBy(fmt.Sprintf("u%d", w)))
				var err error
				switch {
				case i%11 == 0:
					err = s.Delete(p)
				case i%101 == 0:
					err = s.Replace([]*corev1.Pod{p}, "")
				default:
					err = s.Update(p)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if _, err := s.ByIndex(nodeIndex, fmt.Sprintf("n%d", (i+r)%5)); err != nil {
					t.Error(err)
					return
				}
				_ = s.ListIndexFuncValues(ownerIndex)
				_ = s.List()
			}
		}()
	}
	wg.Wait()
	checkInvariants(t, s)
}
