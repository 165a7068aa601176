package etcd_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

type object struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data  map[string]string `json:"data"`
	Items []object          `json:"items"`
	// Code is set on a Status.
	Code int `json:"code"`
}

func decode(t *testing.T, b []byte) object {
	t.Helper()
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return o
}

func rv(t *testing.T, o object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", o.Metadata.ResourceVersion, err)
	}
	return n
}

// TestAPIServerOnEtcd runs the API server on etcd and drives it over HTTP:
// create, update, list and watch of configmaps, resourceVersion equal to
// etcd's mod_revision of the key, then the server's periodic compaction
// (fake clock) compacting etcd, after which an old resourceVersion gets
// 410 Gone.
func TestAPIServerOnEtcd(t *testing.T) {
	c := etcdtest.Start(t)
	clk := clocktesting.NewFakeClock(time.Now())
	s := testserver.Start(t, testserver.Options{
		Storage: controlplane.StorageEtcd, EtcdEndpoints: c.Endpoints(), EtcdPrefix: "/cluster-a",
		Tune: func(cfg *apiserver.Config) {
			cfg.Clock = clk
			cfg.CompactionInterval = time.Minute
		},
	})
	const cms = "/api/v1/namespaces/default/configmaps"
	code, body, _ := s.Do(t, http.MethodPost, cms, "application/json",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"k":"v1"}}`))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	created := decode(t, body)
	rv1 := rv(t, created)

	// resourceVersion is etcd's revision of the key, under the prefix.
	kv, err := etcd.New(t.Context(), etcd.Options{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	res, err := kv.Client().Get(t.Context(), "/cluster-a", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range res.Kvs {
		if strings.Contains(string(k.Key), "configmaps") && strings.HasSuffix(string(k.Key), "/cm1") {
			found = k.ModRevision == rv1
			t.Logf("etcd key %s at %d", k.Key, k.ModRevision)
		}
	}
	if !found {
		t.Fatalf("no etcd key under /cluster-a for cm1 at revision %d", rv1)
	}

	// A watch from rv1 sees the update.
	events := watch(t, s, cms+"?watch=1&resourceVersion="+strconv.FormatInt(rv1, 10))
	created.Data["k"] = "v2"
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm1", "resourceVersion": created.Metadata.ResourceVersion}, "data": created.Data})
	code, body, _ = s.Do(t, http.MethodPut, cms+"/cm1", "application/json", strings.NewReader(string(b)))
	if code != http.StatusOK {
		t.Fatalf("update: %d %s", code, body)
	}
	rv2 := rv(t, decode(t, body))
	ev := next(t, events)
	if ev.Type != "MODIFIED" || rv(t, ev.Object) != rv2 || ev.Object.Data["k"] != "v2" {
		t.Fatalf("watch event %s %+v, want MODIFIED at %d", ev.Type, ev.Object, rv2)
	}
	// A stale update conflicts.
	code, _, _ = s.Do(t, http.MethodPut, cms+"/cm1", "application/json", strings.NewReader(string(b)))
	if code != http.StatusConflict {
		t.Fatalf("stale update: %d, want 409", code)
	}
	code, body, _ = s.Do(t, http.MethodGet, cms, "", nil)
	list := decode(t, body)
	if code != http.StatusOK || len(list.Items) != 1 || rv(t, list.Items[0]) != rv2 || rv(t, list) < rv2 {
		t.Fatalf("list: %d %s", code, body)
	}

	// Two compaction ticks: the first notes the revision, the second
	// compacts etcd to it.
	for i := 0; ; i++ {
		comp, err := kv.CompactedRevision(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if comp > rv1 {
			break
		}
		if i > 3000 {
			t.Fatalf("etcd compacted at %d, want > %d", comp, rv1)
		}
		if _, _, err := kv.Delete(t.Context(), "/unrelated", 0); err != nil {
			_, _ = kv.Create(t.Context(), "/unrelated", nil) // move the revision
		}
		clk.Step(time.Minute)
		time.Sleep(10 * time.Millisecond)
	}
	code, body, _ = s.Do(t, http.MethodGet, cms+"?resourceVersion="+strconv.FormatInt(rv1, 10)+"&resourceVersionMatch=Exact", "", nil)
	if code != http.StatusGone {
		t.Fatalf("list at compacted %d: %d %s, want 410", rv1, code, body)
	}
}

type watchEvent struct {
	Type   string `json:"type"`
	Object object `json:"object"`
}

// watch opens a watch request and streams its events until the test ends.
func watch(t *testing.T, s *testserver.Server, path string) <-chan watchEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %v %v", path, resp, err)
	}
	out := make(chan watchEvent, 16)
	done := make(chan struct{})
	t.Cleanup(func() { resp.Body.Close(); <-done })
	go func() {
		defer close(done)
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				out <- ev
			}
		}
	}()
	return out
}

func next(t *testing.T, events <-chan watchEvent) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10s")
	}
	return watchEvent{}
}
