package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

type podQueue = Queue[*corev1.Pod]

func newPodQueue(known KeyLister[*corev1.Pod]) *podQueue {
	return NewQueue(MetaNamespaceKeyFunc[*corev1.Pod], known)
}

// describe renders a delta as "Type key@rv", with a "~" before the rv of a
// tombstone's last known state.
func describe(d Delta[*corev1.Pod]) string {
	if d.Tombstone != nil {
		return fmt.Sprintf("%s %s@~%s", d.Type, d.Key, d.Tombstone.Obj.ResourceVersion)
	}
	return fmt.Sprintf("%s %s@%s", d.Type, d.Key, d.Object.ResourceVersion)
}

func popOne(t *testing.T, q *podQueue) Batch[*corev1.Pod] {
	t.Helper()
	var got Batch[*corev1.Pod]
	if err := q.Pop(func(b Batch[*corev1.Pod]) error { got = b; return nil }); err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return got
}

func describeBatch(b Batch[*corev1.Pod]) []string {
	out := []string{b.Kind.String()}
	for _, d := range b.Deltas {
		out = append(out, describe(d))
	}
	return out
}

func TestQueueDeliversEveryEventInOrder(t *testing.T) {
	q := newPodQueue(nil)
	steps := []struct {
		call func(*corev1.Pod) error
		pod  *corev1.Pod
		want string
	}{
		{q.Add, newPod("a", "p1", rv("1")), "Added a/p1@1"},
		{q.Update, newPod("a", "p1", rv("2")), "Updated a/p1@2"},
		{q.Add, newPod("b", "p2", rv("3")), "Added b/p2@3"},
		{q.Update, newPod("a", "p1", rv("4")), "Updated a/p1@4"},
		{q.Delete, newPod("a", "p1", rv("5")), "Deleted a/p1@5"},
		{q.Add, newPod("a", "p1", rv("6")), "Added a/p1@6"},
	}
	for _, s := range steps {
		if err := s.call(s.pod); err != nil {
			t.Fatal(err)
		}
	}
	if q.Len() != len(steps) {
		t.Fatalf("Len = %d, want %d (nothing coalesced)", q.Len(), len(steps))
	}
	for _, s := range steps {
		b := popOne(t, q)
		if b.Kind != EventBatch || len(b.Deltas) != 1 || describe(b.Deltas[0]) != s.want {
			t.Fatalf("popped %v, want event %q", describeBatch(b), s.want)
		}
	}
	if err := q.Add(newPod("a", "")); err == nil {
		t.Fatal("Add of a nameless pod succeeded")
	}
}

func TestReplaceTombstonesVanishedObjectsWithLastState(t *testing.T) {
	known := NewObjectIndexer[*corev1.Pod](nil)
	for _, p := range []*corev1.Pod{newPod("a", "p1", rv("1")), newPod("a", "p2", rv("1")), newPod("a", "p3", rv("1")), newPod("a", "p5", rv("1"))} {
		if err := known.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	q := newPodQueue(known)
	must(t, q.Update(newPod("a", "p2", rv("2")))) // pending: newer than the store
	must(t, q.Add(newPod("a", "p4", rv("3"))))    // pending: unknown to the store
	must(t, q.Delete(newPod("a", "p3", rv("4")))) // pending delete: no tombstone
	must(t, q.Replace([]*corev1.Pod{newPod("a", "p1", rv("9")), newPod("b", "p6", rv("9"))}, "9"))
	for range 3 {
		popOne(t, q)
	}
	b := popOne(t, q)
	want := []string{"replace", "Deleted a/p2@~2", "Deleted a/p4@~3", "Deleted a/p5@~1", "Replaced a/p1@9", "Replaced b/p6@9"}
	if got := describeBatch(b); !slices.Equal(got, want) {
		t.Fatalf("replace batch = %v, want %v", got, want)
	}
	if b.ResourceVersion != "9" {
		t.Fatalf("ResourceVersion = %q", b.ResourceVersion)
	}
	for _, d := range b.Deltas[:3] {
		if !d.Tombstone.ObjKnown || d.Tombstone.Key != d.Key || d.Object != d.Tombstone.Obj {
			t.Fatalf("tombstone %+v malformed", d.Tombstone)
		}
	}
}

func TestReplaceSeesInFlightBatch(t *testing.T) {
	known := NewObjectIndexer[*corev1.Pod](nil)
	q := newPodQueue(known)
	must(t, q.Add(newPod("a", "p1", rv("1"))))
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- q.Pop(func(b Batch[*corev1.Pod]) error {
			close(entered)
			<-release // the store has not been updated yet
			_, err := Apply[*corev1.Pod](known, b)
			return err
		})
	}()
	<-entered
	must(t, q.Replace(nil, "2"))
	close(release)
	must(t, <-done)
	want := []string{"replace", "Deleted a/p1@~1"}
	if got := describeBatch(popOne(t, q)); !slices.Equal(got, want) {
		t.Fatalf("replace batch = %v, want %v", got, want)
	}
}

func TestResync(t *testing.T) {
	known := NewObjectIndexer[*corev1.Pod](nil)
	q := newPodQueue(known)
	must(t, q.Resync())
	if q.Len() != 0 {
		t.Fatal("resync of an empty store enqueued a batch")
	}
	must(t, known.Add(newPod("a", "p1", rv("1"))))
	must(t, known.Add(newPod("a", "p2", rv("1"))))
	must(t, known.Add(newPod("a", "p3", rv("1"))))
	must(t, q.Update(newPod("a", "p2", rv("2"))))
	must(t, q.Resync())
	popOne(t, q)
	want := []string{"resync", "Sync a/p1@1", "Sync a/p3@1"}
	if got := describeBatch(popOne(t, q)); !slices.Equal(got, want) {
		t.Fatalf("resync batch = %v, want %v", got, want)
	}
	if err := newPodQueue(nil).Resync(); err != nil {
		t.Fatalf("resync without known store: %v", err)
	}
}

func TestHasSynced(t *testing.T) {
	q := newPodQueue(NewObjectIndexer[*corev1.Pod](nil))
	if q.HasSynced() {
		t.Fatal("synced before anything was enqueued")
	}
	must(t, q.Replace([]*corev1.Pod{newPod("a", "p1"), newPod("a", "p2")}, "1"))
	must(t, q.Add(newPod("a", "p3")))
	if q.HasSynced() {
		t.Fatal("synced before the initial list was popped")
	}
	var syncedInside bool
	must(t, q.Pop(func(Batch[*corev1.Pod]) error { syncedInside = q.HasSynced(); return nil }))
	if syncedInside {
		t.Fatal("synced while the initial list was still being processed")
	}
	if !q.HasSynced() {
		t.Fatal("not synced after the initial list was processed")
	}
	must(t, q.Replace(nil, "2"))
	if !q.HasSynced() {
		t.Fatal("HasSynced turned false again")
	}

	empty := newPodQueue(nil)
	must(t, empty.Replace(nil, "1"))
	popOne(t, empty)
	if !empty.HasSynced() {
		t.Fatal("an empty initial list never syncs")
	}
}

func TestCloseWakesPopAndRejectsWork(t *testing.T) {
	q := newPodQueue(nil)
	done := make(chan error)
	go func() { done <- q.Pop(func(Batch[*corev1.Pod]) error { return nil }) }()
	q.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("blocked Pop = %v, want ErrClosed", err)
	}
	if !q.IsClosed() {
		t.Fatal("IsClosed false")
	}
	if err := q.Add(newPod("a", "p")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close = %v", err)
	}
	if err := q.Replace(nil, ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("Replace after Close = %v", err)
	}
	if err := q.Resync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Resync after Close = %v", err)
	}
	q.Close()
}

func TestPopProcessErrorDropsBatch(t *testing.T) {
	q := newPodQueue(nil)
	must(t, q.Add(newPod("a", "p1")))
	must(t, q.Add(newPod("a", "p2")))
	boom := errors.New("boom")
	if err := q.Pop(func(Batch[*corev1.Pod]) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Pop = %v, want boom", err)
	}
	if got := popOne(t, q).Deltas[0].Key; got != "a/p2" {
		t.Fatalf("next = %s, want a/p2", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPipelineAppliesRelistBeforeNotifying drives the documented protocol
// with Apply: handlers of a relist's events see the whole list in the store.
func TestPipelineAppliesRelistBeforeNotifying(t *testing.T) {
	store := NewObjectIndexer(podIndexers())
	q := newPodQueue(store)
	must(t, q.Replace([]*corev1.Pod{newPod("a", "p1", rv("1")), newPod("a", "p2", rv("1"))}, "1"))
	must(t, q.Update(newPod("a", "p1", rv("2"))))
	must(t, q.Replace([]*corev1.Pod{newPod("a", "p1", rv("3")), newPod("a", "p3", rv("3"))}, "3"))
	must(t, q.Delete(newPod("a", "p3", rv("4"))))
	var log []string
	for q.Len() > 0 {
		must(t, q.Pop(func(b Batch[*corev1.Pod]) error {
			events, err := Apply[*corev1.Pod](store, b)
			if err != nil {
				return err
			}
			for _, e := range events {
				keys := store.ListKeys()
				slices.Sort(keys)
				line := fmt.Sprintf("%s %s store=%v", e.Type, e.Key, keys)
				if e.Tombstone != nil {
					line += " tombstone@" + e.Old.ResourceVersion
				}
				log = append(log, line)
			}
			return nil
		}))
	}
	want := []string{
		"Add a/p1 store=[a/p1 a/p2]",
		"Add a/p2 store=[a/p1 a/p2]",
		"Update a/p1 store=[a/p1 a/p2]",
		"Delete a/p2 store=[a/p1 a/p3] tombstone@1",
		"Update a/p1 store=[a/p1 a/p3]",
		"Add a/p3 store=[a/p1 a/p3]",
		"Delete a/p3 store=[a/p1]",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("events:\n%v\nwant:\n%v", log, want)
	}
	checkInvariants(t, store)
	must(t, q.Resync())
	must(t, q.Pop(func(b Batch[*corev1.Pod]) error {
		events, err := Apply[*corev1.Pod](store, b)
		if err != nil || len(events) != 1 || !events[0].Resync || events[0].Old != events[0].New {
			t.Fatalf("resync events = %+v, %v", events, err)
		}
		return nil
	}))
}

// TestConcurrentProducerConsumerReaders runs a producer, the consumer and
// readers at once; run with -race.
func TestConcurrentProducerConsumerReaders(t *testing.T) {
	store := NewObjectIndexer(podIndexers())
	q := newPodQueue(store)
	const n = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer q.Close()
		for i := range n {
			p := newPod("ns", fmt.Sprintf("p%d", i%50), rv(fmt.Sprint(i)), onNode(fmt.Sprintf("n%d", i%7)))
			var err error
			switch {
			case i%97 == 0:
				err = q.Replace([]*corev1.Pod{p}, fmt.Sprint(i))
			case i%5 == 0:
				err = q.Delete(p)
			default:
				err = q.Update(p)
			}
			if err != nil {
				t.Error(err)
				return
			}
			if i%200 == 0 {
				if err := q.Resync(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	stop := make(chan struct{})
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := NewLister(store, podGR)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := store.ByIndex(nodeIndex, fmt.Sprintf("n%d", r)); err != nil {
					t.Error(err)
					return
				}
				if _, err := l.Namespace("ns").List(nil); err != nil {
					t.Error(err)
					return
				}
				_ = q.HasSynced()
			}
		}()
	}
	lastRV := map[string]int{}
	for {
		err := q.Pop(func(b Batch[*corev1.Pod]) error {
			for _, d := range b.Deltas {
				if d.Type == Sync || d.Tombstone != nil {
					continue
				}
				var v int
				fmt.Sscan(d.Object.ResourceVersion, &v)
				if v < lastRV[d.Key] {
					return fmt.Errorf("%s went back from %d to %d", d.Key, lastRV[d.Key], v)
				}
				lastRV[d.Key] = v
			}
			_, err := Apply[*corev1.Pod](store, b)
			return err
		})
		if errors.Is(err, ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	checkInvariants(t, store)
}
