package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// write is one acknowledged mutation: its event type, object and revision.
type write struct {
	typ, name string
	rev       int64
}

func TestWatchResumesFromListRevision(t *testing.T) {
	s, _ := start(t, nil)
	for i := range 3 {
		createCM(t, s, fmt.Sprintf("seed-%d", i), nil)
	}
	code, body, _ := s.Do(t, http.MethodGet, cmPath, "", nil)
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	listRV := decode[list](t, body).Metadata.ResourceVersion

	var writes []write
	for i := range 20 {
		name := fmt.Sprintf("w-%d", i)
		switch i % 4 {
		case 0, 1:
			writes = append(writes, write{"ADDED", name, createCM(t, s, name, map[string]string{"i": "1"})})
		case 2: // update the previous one
			prev := fmt.Sprintf("w-%d", i-1)
			code, body, _ := s.Do(t, http.MethodPatch, cmPath+"/"+prev, "application/merge-patch+json", strings.NewReader(`{"data":{"i":"2"}}`))
			if code != http.StatusOK {
				t.Fatalf("patch %s: %d %s", prev, code, body)
			}
			writes = append(writes, write{"MODIFIED", prev, rv(decode[object](t, body).Metadata.ResourceVersion)})
		case 3: // delete the one before
			victim := fmt.Sprintf("w-%d", i-3)
			code, body, _ := s.Do(t, http.MethodDelete, cmPath+"/"+victim, "", nil)
			if code != http.StatusOK {
				t.Fatalf("delete %s: %d %s", victim, code, body)
			}
			del := decode[status](t, body)
			if del.Kind != "Status" {
				t.Fatalf("delete answered %s, want a Status", body)
			}
			// The deletion's revision is the next after the previous write.
			writes = append(writes, write{"DELETED", victim, writes[len(writes)-1].rev + 1})
		}
	}

	ch, code, body := openWatch(t, s, cmPath+"?watch=1&resourceVersion="+listRV)
	if code != http.StatusOK {
		t.Fatalf("watch: %d %s", code, body)
	}
	for i, w := range writes {
		ev := next(t, ch)
		o := decode[object](t, ev.Object)
		if ev.Type != w.typ || o.Metadata.Name != w.name || rv(o.Metadata.ResourceVersion) != w.rev {
			t.Fatalf("event %d = %s %s@%s, want %s %s@%d", i, ev.Type, o.Metadata.Name, o.Metadata.ResourceVersion, w.typ, w.name, w.rev)
		}
	}
	// Exactly those: the next event is a marker written now.
	markerRV := createCM(t, s, "marker", nil)
	ev := next(t, ch)
	if o := decode[object](t, ev.Object); ev.Type != "ADDED" || o.Metadata.Name != "marker" || rv(o.Metadata.ResourceVersion) != markerRV {
		t.Fatalf("after the %d writes got %s %s, want ADDED marker", len(writes), ev.Type, o.Metadata.Name)
	}
}

func TestWatchFromCompactedRevisionIsGoneAndRelistAgrees(t *testing.T) {
	s, kv := start(t, func(c *apiserver.Config) { c.WatchCacheCapacity = 16 })
	first := createCM(t, s, "first", nil)
	for i := range 40 {
		createCM(t, s, fmt.Sprintf("later-%d", i), nil)
	}
	// The watch cache keeps 16 events: a watch from before them is too old.
	// As kube-apiserver answers it: 200, then one ERROR event carrying the
	// 410 Expired Status, then the end of the stream.
	ch, code, body := openWatch(t, s, fmt.Sprintf("%s?watch=1&resourceVersion=%d", cmPath, first))
	if code != http.StatusOK {
		t.Fatalf("watch from an expired revision: %d %s, want 200 and an ERROR event", code, body)
	}
	ev := next(t, ch)
	st := decode[status](t, ev.Object)
	if ev.Type != "ERROR" || st.Kind != "Status" || st.Code != http.StatusGone || st.Reason != "Expired" ||
		!strings.HasPrefix(st.Message, fmt.Sprintf("too old resource version: %d (", first)) {
		t.Fatalf("watch from an expired revision: %s %s, want ERROR with a 410 Expired Status", ev.Type, ev.Object)
	}
	if extra, open := <-ch; open {
		t.Fatalf("the stream went on after the ERROR event: %s %s", extra.Type, extra.Object)
	}

	// Storage compaction: a continue token and an exact read from before it
	// are gone too.
	code, body, _ = s.Do(t, http.MethodGet, cmPath+"?limit=5", "", nil)
	page := decode[list](t, body)
	if code != http.StatusOK || page.Metadata.Continue == "" {
		t.Fatalf("first page: %d, continue %q", code, page.Metadata.Continue)
	}
	ctx := context.Background()
	cur, err := kv.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	createCM(t, s, "after-compaction", nil)
	if err := kv.Compact(ctx, cur+1); err != nil {
		t.Fatal(err)
	}
	code, body, _ = s.Do(t, http.MethodGet, cmPath+"?limit=5&continue="+page.Metadata.Continue, "", nil)
	if st := decode[status](t, body); code != http.StatusGone || st.Reason != "Expired" {
		t.Errorf("continue after compaction: %d %s, want 410 Expired", code, body)
	}
	code, body, _ = s.Do(t, http.MethodGet, fmt.Sprintf("%s?resourceVersion=%d&resourceVersionMatch=Exact", cmPath, first), "", nil)
	if st := decode[status](t, body); code != http.StatusGone || st.Reason != "Expired" {
		t.Errorf("exact list at a compacted revision: %d %s, want 410 Expired", code, body)
	}

	// A relist (what a client does after 410) agrees with the store.
	code, body, _ = s.Do(t, http.MethodGet, cmPath, "", nil)
	if code != http.StatusOK {
		t.Fatalf("relist: %d %s", code, body)
	}
	relist := decode[list](t, body)
	stored, err := kv.List(ctx, "/registry/core/configmaps/default/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, kv := range stored.KVs {
		want = append(want, fmt.Sprintf("%s@%d", strings.TrimPrefix(kv.Key, "/registry/core/configmaps/default/"), kv.ModRevision))
	}
	for _, o := range relist.Items {
		got = append(got, o.Metadata.Name+"@"+o.Metadata.ResourceVersion)
	}
	if !slices.Equal(got, want) {
		t.Errorf("relist = %v\nstore  = %v", got, want)
	}
	if rv(relist.Metadata.ResourceVersion) < stored.Revision {
		t.Errorf("relist revision %s older than the store's %d", relist.Metadata.ResourceVersion, stored.Revision)
	}
}

func TestStreamingListSendsInitialEventsThenBookmark(t *testing.T) {
	s, _ := start(t, nil)
	for i := range 5 {
		createCM(t, s, fmt.Sprintf("init-%d", i), map[string]string{"app": "x"})
	}
	ch, code, body := openWatch(t, s, cmPath+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if code != http.StatusOK {
		t.Fatalf("streaming list: %d %s", code, body)
	}
	var got []string
	for range 5 {
		ev := next(t, ch)
		if ev.Type != "ADDED" {
			t.Fatalf("initial event %s, want ADDED", ev.Type)
		}
		got = append(got, decode[object](t, ev.Object).Metadata.Name)
	}
	if want := []string{"init-0", "init-1", "init-2", "init-3", "init-4"}; !slices.Equal(got, want) {
		t.Errorf("initial events %v, want %v", got, want)
	}
	ev := next(t, ch)
	bm := decode[object](t, ev.Object)
	if ev.Type != "BOOKMARK" || bm.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Fatalf("after initial events got %s %s, want the initial-events-end BOOKMARK", ev.Type, ev.Object)
	}
	live := createCM(t, s, "live", nil)
	ev = next(t, ch)
	if o := decode[object](t, ev.Object); ev.Type != "ADDED" || o.Metadata.Name != "live" || rv(o.Metadata.ResourceVersion) != live {
		t.Errorf("live event %s %s, want ADDED live", ev.Type, o.Metadata.Name)
	}
	if rv(bm.Metadata.ResourceVersion) >= live {
		t.Errorf("bookmark revision %s not before the live write %d", bm.Metadata.ResourceVersion, live)
	}
}

func TestWatchFiltersBySelectors(t *testing.T) {
	s, _ := start(t, nil)
	ch, code, body := openWatch(t, s, cmPath+"?watch=1&labelSelector=app%3Dweb&fieldSelector=metadata.name!%3Dskip")
	if code != http.StatusOK {
		t.Fatalf("watch: %d %s", code, body)
	}
	post := func(name string, labels map[string]string) {
		code, body, _ := s.Do(t, http.MethodPost, cmPath, "application/json",
			bytes.NewReader(mustJSON(t, object{Metadata: meta{Name: name, Labels: labels}})))
		if code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	post("other", map[string]string{"app": "db"})
	post("skip", map[string]string{"app": "web"})
	post("match", map[string]string{"app": "web"})
	if ev := next(t, ch); ev.Type != "ADDED" || decode[object](t, ev.Object).Metadata.Name != "match" {
		t.Fatalf("first event %s %s, want ADDED match", ev.Type, ev.Object)
	}
	// Relabelling out of the selector is a DELETED for this watcher.
	code, body, _ = s.Do(t, http.MethodPatch, cmPath+"/match", "application/merge-patch+json", strings.NewReader(`{"metadata":{"labels":{"app":"db"}}}`))
	if code != http.StatusOK {
		t.Fatalf("relabel: %d %s", code, body)
	}
	if ev := next(t, ch); ev.Type != "DELETED" || decode[object](t, ev.Object).Metadata.Name != "match" {
		t.Fatalf("after relabel got %s, want DELETED match", ev.Type)
	}
}

func TestWatchWithoutInitialEventsStartsNow(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "old", nil)
	for _, rv := range []string{"", "0"} {
		ch, code, body := openWatch(t, s, cmPath+"?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion="+rv)
		if code != http.StatusOK {
			t.Fatalf("rv %q: %d %s", rv, code, body)
		}
		name := "new" + rv
		createCM(t, s, name, nil)
		if ev := next(t, ch); ev.Type != "ADDED" || decode[object](t, ev.Object).Metadata.Name != name {
			t.Errorf("rv %q: first event %s %s, want ADDED %s (no initial events)", rv, ev.Type, ev.Object, name)
		}
	}
}

// TestSlowWatcherIsClosedWithAnError opens one watch that never reads and
// one that does, writes far more than the slow one can buffer, and checks
// that the slow one ends with a 410 ERROR event while the fast one gets
// every event.
func TestSlowWatcherIsClosedWithAnError(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.WatchCacheCapacity = 100000 })
	req, _ := http.NewRequest(http.MethodGet, s.URL+cmPath+"?watch=1", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	slow, err := s.Client.Do(req) // never read until the writes are done
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Body.Close()
	fast, code, _ := openWatch(t, s, cmPath+"?watch=1")
	if code != http.StatusOK {
		t.Fatal("fast watch", code)
	}
	const writes = 3000
	big := strings.Repeat("x", 4096)
	got := make(chan int)
	go func() {
		n := 0
		for range fast {
			if n++; n == writes {
				break
			}
		}
		got <- n
	}()
	for i := range writes {
		createCM(t, s, fmt.Sprintf("slow-%d", i), map[string]string{"x": big})
	}
	if n := <-got; n != writes {
		t.Fatalf("fast watcher got %d events, want %d", n, writes)
	}
	var events []watchEvent
	dec := json.NewDecoder(slow.Body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		events = append(events, ev)
	}
	if len(events) == 0 || len(events) > writes {
		t.Fatalf("slow watcher read %d events", len(events))
	}
	last := events[len(events)-1]
	st := decode[status](t, last.Object)
	if last.Type != "ERROR" || st.Code != http.StatusGone {
		t.Fatalf("slow watcher's last event: %s %s, want ERROR with a 410 Status", last.Type, last.Object)
	}
	for i, ev := range events[:len(events)-1] {
		if name := decode[object](t, ev.Object).Metadata.Name; ev.Type != "ADDED" || name != fmt.Sprintf("slow-%d", i) {
			t.Fatalf("slow watcher event %d: %s %s, want ADDED slow-%d (a gap-free prefix)", i, ev.Type, name, i)
		}
	}
	t.Logf("slow watcher received %d events before the ERROR", len(events)-1)
}
