package watchcache

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

func pageNames(t *testing.T, items []k8sruntime.Object) []string {
	t.Helper()
	var out []string
	for _, o := range items {
		out = append(out, o.(*corev1.ConfigMap).Name)
	}
	return out
}

func TestPageWalksKeysWithLimitAndRemaining(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		for i := range 7 {
			name := fmt.Sprintf("c%d", i)
			lbl := map[string]string{"odd": fmt.Sprint(i%2 == 1)}
			e.create(cmKey("a", name), configMap("a", name, lbl, "0"))
		}
		e.create(cmKey("b", "z"), configMap("b", "z", nil, "0"))
	})
	e.sync()
	p, ok, err := e.cache.Page(PageOptions{ListOptions: ListOptions{Namespace: "a"}, Limit: 3})
	if err != nil || !ok {
		t.Fatalf("first page: %v %v", ok, err)
	}
	if got := fmt.Sprint(pageNames(t, p.Items)); got != "[c0 c1 c2]" || !p.More || p.LastKey != cmKey("a", "c2") || p.Remaining != 4 {
		t.Fatalf("first page: %s more=%v last=%q remaining=%d", got, p.More, p.LastKey, p.Remaining)
	}
	if p.Revision != e.cache.Revision() {
		t.Fatalf("first page at %d, cache at %d", p.Revision, e.cache.Revision())
	}
	// The last page of the namespace: nothing of namespace b follows.
	p, ok, err = e.cache.Page(PageOptions{ListOptions: ListOptions{Namespace: "a"}, Limit: 4, StartKey: cmKey("a", "c3"), Revision: p.Revision})
	if err != nil || !ok {
		t.Fatalf("last page: %v %v", ok, err)
	}
	if got := fmt.Sprint(pageNames(t, p.Items)); got != "[c3 c4 c5 c6]" || p.More || p.LastKey != "" {
		t.Fatalf("last page: %s more=%v last=%q", got, p.More, p.LastKey)
	}
	// A selector: the page fills with matches; no count is given.
	p, _, err = e.cache.Page(PageOptions{ListOptions: ListOptions{Label: mustSelector(t, "odd=true")}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pageNames(t, p.Items)); got != "[c1 c3]" || !p.More || p.LastKey != cmKey("a", "c3") || p.Remaining != 1 {
		t.Fatalf("selector page: %s more=%v last=%q remaining=%d", got, p.More, p.LastKey, p.Remaining)
	}
}

func TestPageAtRevisionOnlyWhileUnchanged(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "x"), configMap("a", "x", nil, "0"))
	})
	e.sync()
	at := e.cache.Revision()
	if _, ok, err := e.cache.Page(PageOptions{Revision: at}); err != nil || !ok {
		t.Fatalf("page at the cache revision: %v %v", ok, err)
	}
	if _, ok, err := e.cache.Page(PageOptions{Revision: at + 1}); err != nil || ok {
		t.Fatalf("page after the cache revision served: %v %v", ok, err)
	}
	// A write to another prefix moves the store, not this state: a page
	// at the old revision is still the current state once the cache
	// caught up.
	e.create(otherPrefix+"a/s", configMap("a", "s", nil, "0"))
	e.sync()
	p, ok, err := e.cache.Page(PageOptions{Revision: at})
	if err != nil || !ok || p.Revision != at || len(p.Items) != 1 {
		t.Fatalf("page at %d after an unrelated write: %+v %v %v", at, p, ok, err)
	}
	// A change under the prefix after the revision: the cache no longer
	// has that state.
	changed := e.update(cmKey("a", "x"), configMap("a", "x", nil, "1"))
	e.sync()
	if _, ok, err := e.cache.Page(PageOptions{Revision: at}); err != nil || ok {
		t.Fatalf("page at %d after a change at %d served: %v %v", at, changed, ok, err)
	}
	if _, ok, err := e.cache.Page(PageOptions{Revision: changed}); err != nil || !ok {
		t.Fatalf("page at the change's revision: %v %v", ok, err)
	}
}
