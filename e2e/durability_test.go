package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// payload is the deterministic 1 KiB content of configmap name, so a
// reader can tell a complete object from a damaged one.
func payload(name string) string {
	sum := sha256.Sum256([]byte(name))
	return strings.Repeat(hex.EncodeToString(sum[:]), 16)
}

type configMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string]string `json:"data"`
}

type objectMeta struct {
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// acked records what the server acknowledged.
type acked struct {
	mu      sync.Mutex
	created map[string]int64 // name -> resourceVersion of the 201
	counter map[string]int   // counter configmap -> highest acknowledged n
	maxRV   int64
}

func (a *acked) rv(rv string) {
	n, _ := strconv.ParseInt(rv, 10, 64)
	if n > a.maxRV {
		a.maxRV = n
	}
}

// TestKill9DuringWriteLoad kills the server with SIGKILL in the middle of a
// 16-way concurrent write load, restarts it on the same data dir, and checks
// that every acknowledged create and update is there, intact, and that no
// object is half-written — several times in a row on the same data.
func TestKill9DuringWriteLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const writers, rounds = 16, 5
	a := &acked{created: map[string]int64{}, counter: map[string]int{}}
	for round := range rounds {
		s := startServer(t, dir, "bolt")
		verify(t, s, a, round)
		client, token := s.client(t)
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				writeLoad(ctx, client, token, s.addr, fmt.Sprintf("r%d-g%d", round, g), fmt.Sprintf("ctr-%d", g), a)
			}()
		}
		time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
		s.kill()
		stop()
		wg.Wait()
		a.mu.Lock()
		t.Logf("round %d: %d creates acknowledged so far, newest acknowledged revision %d", round, len(a.created), a.maxRV)
		a.mu.Unlock()
	}
	s := startServer(t, dir, "bolt")
	verify(t, s, a, rounds)
	if len(a.created) == 0 {
		t.Fatal("no write was acknowledged: the load never ran")
	}
}

// writeLoad creates configmaps prefix-0, prefix-1, ... and bumps the
// counter configmap ctr with conditional updates until the server dies.
func writeLoad(ctx context.Context, c *http.Client, token, addr, prefix, ctr string, a *acked) {
	base := "https://" + addr + "/api/v1/namespaces/default/configmaps"
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: objectMeta{Name: name}, Data: map[string]string{"payload": payload(name)}}
		code, out := send(ctx, c, token, http.MethodPost, base, cm)
		if code == 0 {
			return // connection refused or reset: the server is gone
		}
		if code == http.StatusCreated {
			a.mu.Lock()
			a.created[name] = parseRV(out)
			a.rv(out.Metadata.ResourceVersion)
			a.mu.Unlock()
		}
		if i%4 == 0 {
			bumpCounter(ctx, c, token, base, ctr, a)
		}
	}
}

// bumpCounter reads ctr and writes n+1 conditionally on its
// resourceVersion (creating it when missing).
func bumpCounter(ctx context.Context, c *http.Client, token, base, ctr string, a *acked) {
	code, cur := send(ctx, c, token, http.MethodGet, base+"/"+ctr, nil)
	switch code {
	case http.StatusNotFound:
		cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: objectMeta{Name: ctr}, Data: map[string]string{"n": "0"}}
		if code, out := send(ctx, c, token, http.MethodPost, base, cm); code == http.StatusCreated {
			a.mu.Lock()
			a.rv(out.Metadata.ResourceVersion)
			a.mu.Unlock()
		}
		return
	case http.StatusOK:
	default:
		return
	}
	n, _ := strconv.Atoi(cur.Data["n"])
	cur.Data["n"] = strconv.Itoa(n + 1)
	if code, out := send(ctx, c, token, http.MethodPut, base+"/"+ctr, cur); code == http.StatusOK {
		a.mu.Lock()
		if n+1 > a.counter[ctr] {
			a.counter[ctr] = n + 1
		}
		a.rv(out.Metadata.ResourceVersion)
		a.mu.Unlock()
	}
}

func parseRV(cm configMap) int64 {
	n, _ := strconv.ParseInt(cm.Metadata.ResourceVersion, 10, 64)
	return n
}

// send returns the status code (0 when the request failed at the transport
// level) and the decoded body.
func send(ctx context.Context, c *http.Client, token, method, url string, body any) (int, configMap) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, configMap{}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, configMap{}
	}
	defer resp.Body.Close()
	var out configMap
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, configMap{} // the server died mid-response: not an acknowledgement
	}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// verify lists every configmap and checks the acknowledged writes.
func verify(t *testing.T, s *server, a *acked, round int) {
	t.Helper()
	client, token := s.client(t)
	req, _ := http.NewRequest(http.MethodGet, "https://"+s.addr+"/api/v1/namespaces/default/configmaps", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("round %d: list: %v", round, err)
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []configMap `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("round %d: list: status %d, %v", round, resp.StatusCode, err)
	}
	listRV, _ := strconv.ParseInt(list.Metadata.ResourceVersion, 10, 64)
	a.mu.Lock()
	defer a.mu.Unlock()
	if listRV < a.maxRV {
		t.Errorf("round %d: list revision %d is older than acknowledged revision %d", round, listRV, a.maxRV)
	}
	have := map[string]configMap{}
	for _, cm := range list.Items {
		have[cm.Metadata.Name] = cm
		if strings.HasPrefix(cm.Metadata.Name, "ctr-") {
			continue
		}
		if cm.Data["payload"] != payload(cm.Metadata.Name) {
			t.Errorf("round %d: %s is damaged (payload of %d bytes)", round, cm.Metadata.Name, len(cm.Data["payload"]))
		}
	}
	for name, rv := range a.created {
		cm, ok := have[name]
		if !ok {
			t.Errorf("round %d: acknowledged create %s (revision %d) is missing", round, name, rv)
			continue
		}
		if got := parseRV(cm); got != rv {
			t.Errorf("round %d: %s has revision %d, acknowledged %d", round, name, got, rv)
		}
	}
	for ctr, n := range a.counter {
		got, _ := strconv.Atoi(have[ctr].Data["n"])
		if got < n {
			t.Errorf("round %d: %s = %d, but %d was acknowledged", round, ctr, got, n)
		}
	}
}
