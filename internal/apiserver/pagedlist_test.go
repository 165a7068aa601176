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
	st := decode[status](t, body)
	if code != http.StatusGone || st.Reason != "Expired" ||
		st.Message != "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter." {
		t.Fatalf("continue after compaction: %d %s", code, body)
	}
}
