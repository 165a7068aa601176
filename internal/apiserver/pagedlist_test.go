package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

type pagedList struct {
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []object `json:"items"`
}

func getPage(t *testing.T, s *testserver.Server, query string) (int, pagedList, []byte) {
	t.Helper()
	code, body, _ := s.Do(t, http.MethodGet, cmPath+"?"+query, "", nil)
	if code != http.StatusOK {
		return code, pagedList{}, body
	}
	return code, decode[pagedList](t, body), body
}

func names(l pagedList) string {
	var out []string
	for _, o := range l.Items {
		out = append(out, o.Metadata.Name)
	}
	return fmt.Sprint(out)
}

func TestPagedListContinueRemainingAndExpiry(t *testing.T) {
	s, kv := start(t, nil)
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		createCM(t, s, n, map[string]string{"k": n})
	}
	code, l, body := getPage(t, s, "limit=2")
	if code != http.StatusOK || names(l) != "[p1 p2]" || l.Metadata.Continue == "" ||
		l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 3 {
		t.Fatalf("first page: %d %s", code, body)
	}
	listRV := l.Metadata.ResourceVersion
	code, l, body = getPage(t, s, "limit=2&continue="+url.QueryEscape(l.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p3 p4]" || l.Metadata.ResourceVersion != listRV ||
		l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 1 {
		t.Fatalf("second page: %d %s", code, body)
	}
	cont := l.Metadata.Continue
	// A change after the list's revision: the next page is still the
	// state at that revision (without p0, with p5's old data).
	createCM(t, s, "p0", nil)
	if code, b, _ := s.Do(t, http.MethodPut, cmPath+"/p5", "application/json", bytes.NewReader(mustJSON(t, object{
		APIVersion: "v1", Kind: "ConfigMap", Metadata: meta{Name: "p5"}, Data: map[string]string{"k": "changed"}}))); code != http.StatusOK {
		t.Fatalf("update p5: %d %s", code, b)
	}
	code, l, body = getPage(t, s, "limit=2&continue="+url.QueryEscape(cont))
	if code != http.StatusOK || names(l) != "[p5]" || l.Items[0].Data["k"] != "p5" || l.Metadata.Continue != "" ||
		l.Metadata.RemainingItemCount != nil || l.Metadata.ResourceVersion != listRV {
		t.Fatalf("last page after a change: %d %s", code, body)
	}
	// A selector: pages of matches, no remainingItemCount (as kube-apiserver).
	code, l, body = getPage(t, s, "limit=1&fieldSelector=metadata.name%21%3Dp1")
	if code != http.StatusOK || names(l) != "[p0]" || l.Metadata.Continue == "" || l.Metadata.RemainingItemCount != nil {
		t.Fatalf("selector page: %d %s", code, body)
	}
	// The token's revision compacted away: 410 Gone, even though nothing
	// under configmaps changed in between.
	code, l, _ = getPage(t, s, "limit=1")
	if code != http.StatusOK || l.Metadata.Continue == "" {
		t.Fatalf("page before compaction: %d", code)
	}
	if code, b, _ := s.Do(t, http.MethodPost, "/api/v1/namespaces/default/secrets", "application/json",
		bytes.NewReader([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"moves-the-store"}}`))); code != http.StatusCreated {
		t.Fatalf("create secret: %d %s", code, b)
	}
	cur, err := kv.CurrentRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Compact(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	code, _, body = getPage(t, s, "limit=1&continue="+url.QueryEscape(l.Metadata.Continue))
	st := decode[expiredStatus](t, body)
	if code != http.StatusGone || st.Reason != "Expired" || st.Message != inconsistentContinue || st.Metadata.Continue == "" {
		t.Fatalf("continue after compaction: %d %s", code, body)
	}
}

// inconsistentContinue is kube-apiserver's message for a continue token
// whose revision was compacted.
const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
	"objects that were created, modified, or deleted between the time the first chunk was returned and now may " +
	"show up in the list."

// expiredStatus is the 410 answer to a compacted continue token, with the
// token that continues the list inconsistently.
type expiredStatus struct {
	status
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
}

func deleteCM(t *testing.T, s *testserver.Server, name string) {
	t.Helper()
	if code, b, _ := s.Do(t, http.MethodDelete, cmPath+"/"+name, "", nil); code != http.StatusOK {
		t.Fatalf("delete %s: %d %s", name, code, b)
	}
}

// TestPagedListFromStorageCountsRemaining: a continued page whose revision
// is no longer current is read from storage (the watch cache holds only
// the current state), and still carries remainingItemCount, the objects
// after it at the list's revision; with a selector it carries none, as
// kube-apiserver.
func TestPagedListFromStorageCountsRemaining(t *testing.T) {
	s, _ := start(t, nil)
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		createCM(t, s, n, map[string]string{"k": n})
	}
	_, first, body := getPage(t, s, "limit=2")
	if names(first) != "[p1 p2]" || first.Metadata.RemainingItemCount == nil || *first.Metadata.RemainingItemCount != 4 {
		t.Fatalf("first page: %s", body)
	}
	_, filtered, body := getPage(t, s, "limit=2&fieldSelector=metadata.name%21%3Dp2")
	if names(filtered) != "[p1 p3]" || filtered.Metadata.Continue == "" || filtered.Metadata.RemainingItemCount != nil {
		t.Fatalf("first filtered page: %s", body)
	}
	// Changes after the list's revision, before and after the next page.
	createCM(t, s, "p0", nil)
	deleteCM(t, s, "p4")
	createCM(t, s, "p7", nil)

	code, l, body := getPage(t, s, "limit=2&continue="+url.QueryEscape(first.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p3 p4]" || l.Metadata.ResourceVersion != first.Metadata.ResourceVersion ||
		l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 2 {
		t.Fatalf("continued page at the old revision: %d %s", code, body)
	}
	code, l, body = getPage(t, s, "limit=1&continue="+url.QueryEscape(l.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p5]" || l.Metadata.Continue == "" ||
		l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 1 {
		t.Fatalf("next page at the old revision: %d %s", code, body)
	}
	code, l, body = getPage(t, s, "limit=1&continue="+url.QueryEscape(l.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p6]" || l.Metadata.Continue != "" || l.Metadata.RemainingItemCount != nil {
		t.Fatalf("last page at the old revision: %d %s", code, body)
	}
	code, l, body = getPage(t, s, "limit=2&fieldSelector=metadata.name%21%3Dp2&continue="+url.QueryEscape(filtered.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p4 p5]" || l.Metadata.Continue == "" || l.Metadata.RemainingItemCount != nil {
		t.Fatalf("continued filtered page at the old revision: %d %s", code, body)
	}
}

// TestPagedListInconsistentContinue: the 410 answer to a continue token
// whose revision was compacted carries a token that continues from the
// same key at the current revision, as kube-apiserver: the pages after it
// show the current objects after that key, and remainingItemCount counts
// the current objects after each page.
func TestPagedListInconsistentContinue(t *testing.T) {
	s, kv := start(t, nil)
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		createCM(t, s, n, nil)
	}
	_, first, body := getPage(t, s, "limit=2")
	if names(first) != "[p1 p2]" || first.Metadata.Continue == "" {
		t.Fatalf("first page: %s", body)
	}
	createCM(t, s, "p0", nil) // before the token's key: not listed
	deleteCM(t, s, "p3")
	createCM(t, s, "p7", nil)
	cur, err := kv.CurrentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Compact(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	code, _, body := getPage(t, s, "limit=2&continue="+url.QueryEscape(first.Metadata.Continue))
	st := decode[expiredStatus](t, body)
	if code != http.StatusGone || st.Message != inconsistentContinue || st.Metadata.Continue == "" {
		t.Fatalf("continue after compaction: %d %s", code, body)
	}
	code, l, body := getPage(t, s, "limit=2&continue="+url.QueryEscape(st.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p4 p5]" || rv(l.Metadata.ResourceVersion) < cur ||
		l.Metadata.RemainingItemCount == nil || *l.Metadata.RemainingItemCount != 2 {
		t.Fatalf("page after the inconsistent token: %d %s", code, body)
	}
	listRV := l.Metadata.ResourceVersion
	code, l, body = getPage(t, s, "limit=2&continue="+url.QueryEscape(l.Metadata.Continue))
	if code != http.StatusOK || names(l) != "[p6 p7]" || l.Metadata.ResourceVersion != listRV ||
		l.Metadata.Continue != "" || l.Metadata.RemainingItemCount != nil {
		t.Fatalf("last page: %d %s", code, body)
	}
}
