package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// watchLine is one event of a watch stream, with the fields of either
// Event version this test looks at.
type watchLine struct {
	Type   string `json:"type"`
	Object struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Note      string `json:"note"`
		Message   string `json:"message"`
		Regarding struct {
			Name string `json:"name"`
		} `json:"regarding"`
		InvolvedObject struct {
			Name string `json:"name"`
		} `json:"involvedObject"`
	} `json:"object"`
}

// watch opens a watch on path and returns its events as they come.
func watch(t *testing.T, s *testserver.Server, path string) <-chan watchLine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %d", path, resp.StatusCode)
	}
	out := make(chan watchLine, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var l watchLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				out <- l
			}
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan watchLine, what string) watchLine {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatalf("%s: watch closed", what)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no watch event", what)
	}
	return watchLine{}
}

func send(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int) {
	t.Helper()
	code, out, _ := s.Do(t, method, path, ctype, strings.NewReader(body))
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
	}
}

// TestWatchBothVersions writes one Event through each API and watches it
// through both: each watcher sees every change, in its own version, with
// the fields under that version's names; a field selector of
// events.k8s.io (regarding.name) filters the same stream.
func TestWatchBothVersions(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	send(t, s, http.MethodPost, "/api/v1/namespaces", "application/json", `{"metadata":{"name":"w"}}`, 201)
	const core, ev = "/api/v1/namespaces/w/events", "/apis/events.k8s.io/v1/namespaces/w/events"
	coreW := watch(t, s, core+"?watch=1")
	evW := watch(t, s, ev+"?watch=1")
	selW := watch(t, s, ev+"?watch=1&fieldSelector=regarding.name%3Dweb")

	send(t, s, http.MethodPost, ev, "application/json", `{"metadata":{"name":"e1"},"eventTime":"2026-01-01T00:00:00.000000Z",
		"reportingController":"example.com/c","reportingInstance":"c-1","action":"Scale","reason":"Scaled",
		"regarding":{"kind":"Deployment","namespace":"w","name":"web"},"note":"up","type":"Normal"}`, 201)
	send(t, s, http.MethodPost, core, "application/json", `{"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","namespace":"w","name":"other"},
		"reason":"Pulled","message":"pulled","type":"Normal"}`, 201)
	send(t, s, http.MethodPatch, core+"/e1", "application/merge-patch+json", `{"message":"changed"}`, 200)
	send(t, s, http.MethodDelete, ev+"/e1", "", "", 200)

	for _, c := range []struct {
		ch         <-chan watchLine
		apiVersion string
		want       []string // type/name/text/regarding
	}{
		{coreW, "v1", []string{"ADDED/e1/up/web", "ADDED/e2/pulled/other", "MODIFIED/e1/changed/web", "DELETED/e1/changed/web"}},
		{evW, "events.k8s.io/v1", []string{"ADDED/e1/up/web", "ADDED/e2/pulled/other", "MODIFIED/e1/changed/web", "DELETED/e1/changed/web"}},
		{selW, "events.k8s.io/v1", []string{"ADDED/e1/up/web", "MODIFIED/e1/changed/web", "DELETED/e1/changed/web"}},
	} {
		for _, want := range c.want {
			l := next(t, c.ch, c.apiVersion+" "+want)
			text, regarding := l.Object.Message, l.Object.InvolvedObject.Name
			if c.apiVersion != "v1" {
				text, regarding = l.Object.Note, l.Object.Regarding.Name
			}
			got := strings.Join([]string{l.Type, l.Object.Metadata.Name, text, regarding}, "/")
			if got != want || l.Object.APIVersion != c.apiVersion || l.Object.Kind != "Event" {
				t.Errorf("%s watch: got %s (%s %s), want %s", c.apiVersion, got, l.Object.APIVersion, l.Object.Kind, want)
			}
		}
	}
}
