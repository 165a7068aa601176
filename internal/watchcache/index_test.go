package watchcache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestIndexedWatchersFollowTriggerValue: watchers indexed by a trigger
// field (spec.nodeName) or by metadata.name receive exactly what unindexed
// filtering would give them, including the DELETED of an object whose value
// moved away from theirs.
func TestIndexedWatchersFollowTriggerValue(t *testing.T) {
	e := newEnv(t, pods, func(c *Config) { c.IndexFields = []string{"spec.nodeName"} }, nil)
	from := e.cache.Revision()
	watchSel := func(ns, sel string) *Watcher {
		return e.watch(WatchOptions{Namespace: ns, Field: mustFieldSelector(t, sel), Mode: FromRevision, ResourceVersion: from})
	}
	onA, onB, unbound := watchSel("", "spec.nodeName=a"), watchSel("", "spec.nodeName=b"), watchSel("", "spec.nodeName=")
	otherNS := watchSel("ns1", "spec.nodeName=a")
	byName, otherName := watchSel("", "metadata.name=p"), watchSel("", "metadata.name=q")
	notA, all := watchSel("", "spec.nodeName!=a"), watchSel("", "")
	for w, want := range map[*Watcher]*watcherList{
		onA: e.cache.indexes[1].byValue["a"], unbound: e.cache.indexes[1].byValue[""],
		byName: e.cache.indexes[0].byValue["p"], notA: &e.cache.all,
	} {
		if w.list != want || want == nil {
			t.Fatalf("watcher %+v registered in the wrong list", w.f)
		}
	}

	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns0", Name: "p"}}
	key := podPrefix + "ns0/p"
	created := e.create(key, pod)
	pod.Spec.NodeName = "a"
	bound := e.update(key, pod)
	pod.Status.Phase = corev1.PodRunning
	running := e.update(key, pod)
	pod.Spec.NodeName = "b"
	moved := e.update(key, pod)
	deleted := e.remove(key)
	e.sync()

	expectFrame(t, unbound, watch.Added, "p", created)
	expectFrame(t, unbound, watch.Deleted, "p", bound)
	expectFrame(t, onA, watch.Added, "p", bound)
	expectFrame(t, onA, watch.Modified, "p", running)
	if got := expectFrame(t, onA, watch.Deleted, "p", moved); got.Object.Spec.NodeName != "b" {
		t.Fatalf("DELETED on leaving node a carries spec.nodeName %q, want the new object's", got.Object.Spec.NodeName)
	}
	expectFrame(t, onB, watch.Added, "p", moved)
	expectFrame(t, onB, watch.Deleted, "p", deleted)
	expectFrame(t, notA, watch.Added, "p", created)
	expectFrame(t, notA, watch.Deleted, "p", bound)
	expectFrame(t, notA, watch.Added, "p", moved)
	expectFrame(t, notA, watch.Deleted, "p", deleted)
	for _, w := range []*Watcher{all, byName} {
		expectFrame(t, w, watch.Added, "p", created)
		expectFrame(t, w, watch.Modified, "p", bound)
		expectFrame(t, w, watch.Modified, "p", running)
		expectFrame(t, w, watch.Modified, "p", moved)
		expectFrame(t, w, watch.Deleted, "p", deleted)
	}
	for _, w := range []*Watcher{onA, onB, unbound, otherNS, byName, otherName, notA, all} {
		expectNone(t, w)
	}

	// Ended watchers leave no empty list behind.
	for _, w := range []*Watcher{onA, onB, unbound, otherNS, byName, otherName, notA, all} {
		w.Stop()
	}
	e.cache.wmu.Lock()
	defer e.cache.wmu.Unlock()
	for _, idx := range e.cache.indexes {
		if len(idx.byValue) != 0 {
			t.Fatalf("index %s keeps %d lists after every watcher ended", idx.field, len(idx.byValue))
		}
	}
	if len(e.cache.byNS) != 0 || len(e.cache.all.ws) != 0 {
		t.Fatalf("registry not empty: %d namespaces, %d all-namespace watchers", len(e.cache.byNS), len(e.cache.all.ws))
	}
}
