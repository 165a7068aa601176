package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

func mustCreate(t *testing.T, s storage.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustUpdate(t *testing.T, s storage.Store, key, value string, expected int64) int64 {
	t.Helper()
	rev, err := s.Update(t.Context(), key, []byte(value), expected)
	if err != nil {
		t.Fatalf("Update(%q, %d): %v", key, expected, err)
	}
	return rev
}

func mustDelete(t *testing.T, s storage.Store, key string, expected int64) (int64, storage.KeyValue) {
	t.Helper()
	rev, kv, err := s.Delete(t.Context(), key, expected)
	if err != nil {
		t.Fatalf("Delete(%q, %d): %v", key, expected, err)
	}
	return rev, kv
}

func mustGet(t *testing.T, s storage.Store, key string) storage.KeyValue {
	t.Helper()
	kv, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return kv
}

func mustList(t *testing.T, s storage.Store, prefix string, opts storage.ListOptions) storage.ListResult {
	t.Helper()
	res, err := s.List(t.Context(), prefix, opts)
	if err != nil {
		t.Fatalf("List(%q, %+v): %v", prefix, opts, err)
	}
	return res
}

func mustRevision(t *testing.T, s storage.Store) int64 {
	t.Helper()
	rev, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatalf("CurrentRevision: %v", err)
	}
	return rev
}

func mustWatch(t *testing.T, s storage.Store, prefix string, after int64) storage.WatchStream {
	t.Helper()
	w, err := s.Watch(t.Context(), prefix, after)
	if err != nil {
		t.Fatalf("Watch(%q, %d): %v", prefix, after, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func expectErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// kvString renders a KeyValue for comparisons and messages.
func kvString(kv storage.KeyValue) string {
	return fmt.Sprintf("%s=%q@%d/%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

func sameKV(a, b storage.KeyValue) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func expectKVs(t *testing.T, what string, got, want []storage.KeyValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d keys %v, want %d %v", what, len(got), kvStrings(got), len(want), kvStrings(want))
	}
	for i := range got {
		if !sameKV(got[i], want[i]) {
			t.Fatalf("%s: key %d is %s, want %s", what, i, kvString(got[i]), kvString(want[i]))
		}
	}
}

func kvStrings(kvs []storage.KeyValue) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = kvString(kv)
	}
	return out
}

func eventString(e storage.Event) string {
	return fmt.Sprintf("%s %s@%d value=%q prev=%q created=%v", e.Type, e.Key, e.Revision, e.Value, e.PrevValue, e.Created)
}

// sameEvent compares a received event with the expected one. PrevValue is
// compared for deletes; for puts it may be left nil by the store.
func sameEvent(got, want storage.Event) bool {
	if got.Type != want.Type || got.Key != want.Key || got.Revision != want.Revision || got.Created != want.Created {
		return false
	}
	if !bytes.Equal(got.Value, want.Value) {
		return false
	}
	if want.Type == storage.EventDelete || got.PrevValue != nil {
		return bytes.Equal(got.PrevValue, want.PrevValue)
	}
	return true
}

// recvAll returns every event the watch delivers up to the store's current
// revision (no write may run meanwhile, and no earlier progress request
// may be unanswered): it requests a progress notification and reads until
// it arrives, which must carry the current revision. A missing or extra
// event thus shows without waiting for anything that may never come.
func recvAll(t *testing.T, s storage.Store, w storage.WatchStream) []storage.Event {
	t.Helper()
	cur := mustRevision(t, s)
	w.RequestProgress()
	var got []storage.Event
	for {
		resp, ok := <-w.Responses()
		if !ok {
			t.Fatalf("watch ended after %d events: %v", len(got), w.Err())
		}
		checkResponse(t, resp)
		if len(resp.Events) > 0 {
			got = append(got, resp.Events...)
			continue
		}
		if resp.Revision != cur {
			t.Fatalf("progress notification at %d, want the current revision %d", resp.Revision, cur)
		}
		return got
	}
}

// checkResponse checks that a response's events are in revision order and
// covered by its Revision.
func checkResponse(t *testing.T, resp storage.WatchResponse) {
	t.Helper()
	for i, e := range resp.Events {
		if i > 0 && e.Revision <= resp.Events[i-1].Revision {
			t.Fatalf("events out of order: %s after %s", eventString(e), eventString(resp.Events[i-1]))
		}
		if e.Revision > resp.Revision {
			t.Fatalf("event %s above the response revision %d", eventString(e), resp.Revision)
		}
	}
}

func expectEvents(t *testing.T, got, want []storage.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !sameEvent(got[i], want[i]) {
			t.Fatalf("event %d is %s, want %s", i, eventString(got[i]), eventString(want[i]))
		}
	}
}

// expectQuiet asserts that the watch has nothing more to deliver up to the
// store's current revision.
func expectQuiet(t *testing.T, s storage.Store, w storage.WatchStream) {
	t.Helper()
	if got := recvAll(t, s, w); len(got) > 0 {
		t.Fatalf("unexpected event %s", eventString(got[0]))
	}
}

// expectEnd reads the stream to its end and checks why it ended.
func expectEnd(t *testing.T, w storage.WatchStream, want error) {
	t.Helper()
	for resp := range w.Responses() {
		checkResponse(t, resp)
	}
	if err := w.Err(); !errors.Is(err, want) {
		t.Fatalf("watch ended with %v, want %v", err, want)
	}
}
