package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const cmPath = "/api/v1/namespaces/default/configmaps"

// start runs a server and returns it with its store.
func start(t testing.TB, tune func(*apiserver.Config)) (*testserver.Server, storage.Store) {
	t.Helper()
	var kv storage.Store
	s := testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) {
		kv = c.Storage
		if tune != nil {
			tune(c)
		}
	}})
	return s, kv
}

type meta struct {
	Name            string            `json:"name,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

type object struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   meta              `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

type list struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []object `json:"items"`
}

type status struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details struct {
		Causes []struct {
			Field string `json:"field"`
		} `json:"causes"`
	} `json:"details"`
}

func rv(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, b, err)
	}
	return v
}

// createCM creates a configmap and returns its resourceVersion.
func createCM(t *testing.T, s *testserver.Server, name string, data map[string]string) int64 {
	t.Helper()
	code, body, _ := s.Do(t, http.MethodPost, cmPath, "application/json",
		bytes.NewReader(mustJSON(t, object{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta{Name: name}, Data: data})))
	if code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, code, body)
	}
	return rv(decode[object](t, body).Metadata.ResourceVersion)
}

// watchEvent is one decoded line of a watch stream.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// openWatch opens a watch on path+query and returns a channel of events
// (closed when the stream ends) and the HTTP status.
func openWatch(t *testing.T, s *testserver.Server, url string) (<-chan watchEvent, int, []byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+url, nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("watch %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return nil, resp.StatusCode, buf.Bytes()
	}
	ch := make(chan watchEvent, 1000)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var ev watchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				panic(fmt.Sprintf("watch line %q: %v", sc.Text(), err))
			}
			ch <- ev
		}
	}()
	return ch, http.StatusOK, nil
}

// next returns the next event or fails after 10 s.
func next(t *testing.T, ch <-chan watchEvent) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watchEvent{}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustAtoi(s string) int64 { return rv(s) }
