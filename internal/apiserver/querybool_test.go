package apiserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
)

// TestBooleanQueryParameters checks that every spelling kube-apiserver reads
// as true starts a watch (the Python client sends watch=True), and that
// absent, 0 and false in any case list instead.
func TestBooleanQueryParameters(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "one", nil)
	for _, c := range []struct {
		value string
		watch bool
	}{
		{"true", true}, {"True", true}, {"TRUE", true}, {"1", true}, {"", true}, {"yes", true}, {"t", true},
		{"false", false}, {"False", false}, {"FALSE", false}, {"0", false},
	} {
		q := url.Values{"watch": {c.value}, "timeoutSeconds": {"1"}}
		code, body, _ := s.Do(t, http.MethodGet, cmPath+"?"+q.Encode(), "", nil)
		if code != http.StatusOK {
			t.Fatalf("watch=%q: %d %s", c.value, code, body)
		}
		first, _, _ := bufio.NewReader(bytes.NewReader(body)).ReadLine()
		var head struct{ Kind, Type string }
		if err := json.Unmarshal(first, &head); err != nil {
			t.Fatalf("watch=%q: %v in %s", c.value, err, first)
		}
		if gotWatch := head.Type == "ADDED"; gotWatch != c.watch || (!c.watch && head.Kind != "ConfigMapList") {
			t.Errorf("watch=%q: answered %s, want a watch: %t", c.value, first, c.watch)
		}
	}
	// allowWatchBookmarks=True asks for bookmarks like "true" does: with
	// sendInitialEvents the initial state ends with a bookmark.
	q := url.Values{"watch": {"True"}, "allowWatchBookmarks": {"True"}, "sendInitialEvents": {"True"},
		"resourceVersionMatch": {"NotOlderThan"}, "timeoutSeconds": {"1"}}
	code, body, _ := s.Do(t, http.MethodGet, cmPath+"?"+q.Encode(), "", nil)
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"type":"BOOKMARK"`)) {
		t.Errorf("streaming list with True spellings: %d, no bookmark in %s", code, body)
	}
}

// TestErrorStatusHasDetails checks that the 404 of an unknown resource or
// subresource carries details even with nothing to say in them, as
// kube-apiserver's does (kubectl dereferences them).
func TestErrorStatusHasDetails(t *testing.T) {
	s, _ := start(t, nil)
	for _, path := range []string{"/api/v1/namespaces/default/nosuchresources", "/api/v1/namespaces/default/pods/p/nosuch"} {
		code, body, _ := s.Do(t, http.MethodGet, path, "", nil)
		var st map[string]any
		if err := json.Unmarshal(body, &st); err != nil || code != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if _, ok := st["details"].(map[string]any); !ok {
			t.Errorf("GET %s: Status without details: %s", path, body)
		}
	}
}

// TestTimeoutQueryParameter: `?timeout=` that does not parse is kube's 400
// and nothing is stored; a valid one (shorter than the server's limit, 0,
// or longer) is accepted.
func TestTimeoutQueryParameter(t *testing.T) {
	s, _ := start(t, nil)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t"}}`
	code, out, _ := s.Do(t, http.MethodPost, cmPath+"?timeout=soon", "application/json", bytes.NewReader([]byte(body)))
	var st struct{ Reason, Message string }
	_ = json.Unmarshal(out, &st)
	if code != http.StatusBadRequest || st.Reason != "BadRequest" || st.Message != `invalid timeout specified in the request URL - time: invalid duration "soon"` {
		t.Fatalf("invalid timeout: %d %s", code, out)
	}
	if code, _, _ := s.Do(t, http.MethodGet, cmPath+"/t", "", nil); code != http.StatusNotFound {
		t.Fatalf("the refused create was stored: %d", code)
	}
	for _, v := range []string{"5s", "0s", "10m"} {
		if code, out, _ := s.Do(t, http.MethodGet, cmPath+"?timeout="+v, "", nil); code != http.StatusOK {
			t.Errorf("timeout=%s: %d %s", v, code, out)
		}
	}
}

// TestWatchWithoutTimeoutEndsAfterMinRequestTimeout: a watch that names no
// timeoutSeconds is closed by the server after a random time between the
// minimum request timeout (--min-request-timeout) and twice it.
func TestWatchWithoutTimeoutEndsAfterMinRequestTimeout(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.MinRequestTimeout = time.Second })
	createCM(t, s, "one", nil)
	began := time.Now()
	code, body, _ := s.Do(t, http.MethodGet, cmPath+"?watch=true", "", nil)
	took := time.Since(began)
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"type":"ADDED"`)) {
		t.Fatalf("watch: %d %s", code, body)
	}
	// The upper bound leaves room for a loaded machine: without the
	// setting the watch would stay open for 30 minutes.
	if took < time.Second || took > 10*time.Second {
		t.Errorf("the watch ended after %s, want between 1 s and 2 s", took)
	}
}
