package multiserver_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// write is one acknowledged write: its event type, object and revision.
type write struct {
	typ  watch.EventType
	name string
	rv   int64
}

func rvOf(t *testing.T, cm *corev1.ConfigMap) int64 {
	t.Helper()
	n, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	if err != nil {
		t.Errorf("resourceVersion %q: %v", cm.ResourceVersion, err)
	}
	return n
}

// TestWatchOnOneReplicaSeesWritesThroughAnother: 4 concurrent writers create
// and then update 50 configmaps each through replica A; a watch opened on
// replica B at the resourceVersion of a list taken before delivers exactly
// the 400 acknowledged writes, in revision order, each once, no other.
func TestWatchOnOneReplicaSeesWritesThroughAnother(t *testing.T) {
	c := startEtcd(t)
	srv := startServers(t, c, 2)
	a, b := cms(only(t, srv[0])), cms(only(t, srv[1]))
	ctx := t.Context()
	start, err := b.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const writers, perWriter = 4, 50
	var (
		mu    sync.Mutex
		acked []write
		wg    sync.WaitGroup
	)
	for wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				name := fmt.Sprintf("w%d-%d", wr, i)
				cm, err := a.Create(ctx, configMap(name, map[string]string{"v": "1"}), metav1.CreateOptions{})
				if err != nil {
					t.Errorf("create %s: %v", name, err)
					return
				}
				created := write{watch.Added, name, rvOf(t, cm)}
				cm.Data["v"] = "2"
				cm, err = a.Update(ctx, cm, metav1.UpdateOptions{})
				if err != nil {
					t.Errorf("update %s: %v", name, err)
					return
				}
				mu.Lock()
				acked = append(acked, created, write{watch.Modified, name, rvOf(t, cm)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.SortFunc(acked, func(x, y write) int { return int(x.rv - y.rv) })

	var got []write
	deadline := time.After(30 * time.Second)
	for len(got) < len(acked) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch on B ended after %d of %d events", len(got), len(acked))
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM {
				t.Fatalf("watch on B: unexpected %s event %#v", ev.Type, ev.Object)
			}
			got = append(got, write{ev.Type, cm.Name, rvOf(t, cm)})
		case <-deadline:
			t.Fatalf("watch on B delivered %d of %d events in 30s", len(got), len(acked))
		}
	}
	for i := range acked {
		if got[i] != acked[i] {
			t.Fatalf("event %d on B = %+v, want %+v (acknowledged through A)", i, got[i], acked[i])
		}
	}
	// Nothing else follows: a write made now is the very next event.
	last, err := a.Create(ctx, configMap("last", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || cm.Name != "last" || cm.ResourceVersion != last.ResourceVersion {
			t.Fatalf("event after the sequence: %s %#v, want ADDED last", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the last write")
	}
}

// TestReadYourWritesAcrossReplicas: 200 times, a write acknowledged by one
// replica is seen at once by the other — a consistent list (resourceVersion
// "") returns it or newer, and so does a get (resourceVersion unset). The
// direction alternates.
func TestReadYourWritesAcrossReplicas(t *testing.T) {
	c := startEtcd(t)
	srv := startServers(t, c, 2)
	rs := []*configMaps{cms(only(t, srv[0])), cms(only(t, srv[1]))}
	ctx := t.Context()
	cm, err := rs[0].Create(ctx, configMap("counter", map[string]string{"n": "0"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		writer, reader := rs[i%2], rs[1-i%2]
		cm = cm.DeepCopy()
		cm.Data["n"] = strconv.Itoa(i)
		if cm, err = writer.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		want := rvOf(t, cm)
		list, err := reader.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
		rv, _ := strconv.ParseInt(list.ResourceVersion, 10, 64)
		idx := slices.IndexFunc(list.Items, func(x corev1.ConfigMap) bool { return x.Name == "counter" })
		if idx < 0 || rv < want || list.Items[idx].Data["n"] != strconv.Itoa(i) {
			t.Fatalf("iteration %d: consistent list on the other replica at rv %d misses the write at rv %d (items %v)", i, rv, want, list.Items)
		}
		got, err := reader.Get(ctx, "counter", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		if got.Data["n"] != strconv.Itoa(i) || rvOf(t, got) != want {
			t.Fatalf("iteration %d: get on the other replica = n=%s rv %s, want n=%d rv %d", i, got.Data["n"], got.ResourceVersion, i, want)
		}
	}
}
