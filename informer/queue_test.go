package informer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These tests feed the informer's own sink (the transform in front of its
// real cache.Queue) the way the reflector does, to reach states the test
// server does not produce: managedFields, relists that lose objects.

func withManagedFields(name, rv string) *corev1.ConfigMap {
	cm := configMap(name, rv)
	cm.ResourceVersion = rv
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	return cm
}

func TestDefaultTransformStripsManagedFields(t *testing.T) {
	inf := newInformer(Options[*corev1.ConfigMap]{})
	r := newRecorder[*corev1.ConfigMap]()
	if _, err := inf.AddEventHandler(r, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	running(t, inf)
	if err := inf.sink.Replace([]*corev1.ConfigMap{withManagedFields("a", "1")}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := inf.sink.Add(withManagedFields("b", "2")); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "add default/a initial=true", "add default/b initial=false")
	for _, obj := range inf.Indexer().List() {
		if obj.ManagedFields != nil {
			t.Fatalf("%s kept managedFields", key(obj))
		}
	}
}

func TestCustomTransformAndNoTransform(t *testing.T) {
	label := func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		cm.Labels = map[string]string{"seen": "yes"}
		return cm, nil
	}
	labelled := newInformer(Options[*corev1.ConfigMap]{Transform: label})
	kept := newInformer(Options[*corev1.ConfigMap]{Transform: NoTransform[*corev1.ConfigMap]})
	for _, inf := range []*cmInformer{labelled, kept} {
		running(t, inf)
		if err := inf.sink.Replace([]*corev1.ConfigMap{withManagedFields("a", "1")}, "1"); err != nil {
			t.Fatal(err)
		}
		waitSynced(t, inf.HasSynced)
	}
	a, err := labelled.Lister().Namespace("default").Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if a.Labels["seen"] != "yes" || a.ManagedFields == nil {
		t.Fatalf("custom transform: labels %v, managedFields %v", a.Labels, a.ManagedFields)
	}
	a, err = kept.Lister().Namespace("default").Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ManagedFields) != 1 {
		t.Fatalf("NoTransform lost managedFields: %v", a.ManagedFields)
	}

	boom := errors.New("boom")
	failing := newInformer(Options[*corev1.ConfigMap]{Transform: func(*corev1.ConfigMap) (*corev1.ConfigMap, error) { return nil, boom }})
	if err := failing.sink.Add(configMap("x", "1")); !errors.Is(err, boom) {
		t.Fatalf("failing transform: %v", err)
	}
	if err := failing.sink.Replace([]*corev1.ConfigMap{configMap("x", "1")}, "1"); !errors.Is(err, boom) {
		t.Fatalf("failing transform on replace: %v", err)
	}
	if failing.queue.Len() != 0 {
		t.Fatal("a failed transform enqueued something")
	}
}

// storeChecker is a handler that records, at every callback, how many
// objects the store held.
type storeChecker struct {
	inf *cmInformer
	mu  sync.Mutex
	len []int
	rec *recorder[*corev1.ConfigMap]
}

func (s *storeChecker) note() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.len = append(s.len, s.inf.Indexer().Len())
}
func (s *storeChecker) OnAdd(o *corev1.ConfigMap, initial bool) { s.note(); s.rec.OnAdd(o, initial) }
func (s *storeChecker) OnUpdate(o, n *corev1.ConfigMap)         { s.note(); s.rec.OnUpdate(o, n) }
func (s *storeChecker) OnDelete(o *corev1.ConfigMap, u bool)    { s.note(); s.rec.OnDelete(o, u) }

func TestRelistIsStoredWholeBeforeNotifying(t *testing.T) {
	inf := newInformer(Options[*corev1.ConfigMap]{})
	sc := &storeChecker{inf: inf, rec: newRecorder[*corev1.ConfigMap]()}
	if _, err := inf.AddEventHandler(sc, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	running(t, inf)
	list := []*corev1.ConfigMap{configMap("a", "1"), configMap("b", "1"), configMap("c", "1")}
	if err := inf.sink.Replace(list, "10"); err != nil {
		t.Fatal(err)
	}
	sc.rec.expect(t, "add default/a initial=true", "add default/b initial=true", "add default/c initial=true")
	// A relist after the watch missed b's deletion and d's creation.
	relist := []*corev1.ConfigMap{configMap("a", "2"), configMap("c", "2"), configMap("d", "2")}
	if err := inf.sink.Replace(relist, "20"); err != nil {
		t.Fatal(err)
	}
	sc.rec.expect(t,
		"delete default/b unknown=true",
		"update default/a 2",
		"update default/c 2",
		"add default/d initial=false")
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for k, n := range sc.len {
		if n != 3 {
			t.Fatalf("callback %d saw %d objects in the store, want 3 (each relist stored whole first)", k, n)
		}
	}
}

func TestLifecycle(t *testing.T) {
	inf := newInformer(Options[*corev1.ConfigMap]{})
	if _, err := inf.AddEventHandler(nil, HandlerOptions{}); err == nil {
		t.Fatal("nil handler accepted")
	}
	negative := -time.Second
	if _, err := inf.AddEventHandler(newRecorder[*corev1.ConfigMap](), HandlerOptions{ResyncPeriod: &negative}); err == nil {
		t.Fatal("negative resync period accepted")
	}
	r := newRecorder[*corev1.ConfigMap]()
	r.block = make(chan struct{})
	close(r.block)
	if _, err := inf.AddEventHandler(r, HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		inf.Run(ctx)
		close(done)
	}()
	eventually(t, "started", inf.IsStarted)
	inf.Run(ctx) // a second Run returns at once
	if err := inf.sink.Replace(nil, "1"); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, inf.HasSynced)
	cancel()
	<-done
	if _, err := inf.AddEventHandler(newRecorder[*corev1.ConfigMap](), HandlerOptions{}); !errors.Is(err, ErrStopped) {
		t.Fatalf("add after stop: %v, want ErrStopped", err)
	}
}
