package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const cmPath = "/api/v1/namespaces/default/configmaps"

// newClient returns a client with its own connection pool, as a separate
// program would have.
func newClient(s *testserver.Server) *http.Client {
	tr := s.Client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = tr.TLSClientConfig.Clone()
	return &http.Client{Transport: tr}
}

func do(c *http.Client, s *testserver.Server, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// configMapJSON is a ConfigMap of about 1 KiB.
func configMapJSON(name string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name +
		`","labels":{"app":"bench"}},"data":{"payload":"` + strings.Repeat("x", 900) + `"}}`)
}

// BenchmarkCreate16Clients: b.N creates of 1 KiB ConfigMaps from 16
// concurrent clients against the durable (bolt, fsync) store.
func BenchmarkCreate16Clients(b *testing.B) {
	for _, engine := range []string{controlplane.StorageBolt, controlplane.StorageMemory} {
		b.Run(engine, func(b *testing.B) {
			s := testserver.Start(b, testserver.Options{Storage: engine})
			const clients = 16
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := newClient(s)
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						code, body, err := do(c, s, http.MethodPost, cmPath, configMapJSON(fmt.Sprintf("cm-%d", i)))
						if err != nil || code != http.StatusCreated {
							errs <- fmt.Errorf("create: %d %s %v", code, body, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
		})
	}
}

// BenchmarkList10k: listing 10,000 ConfigMaps (consistent list, served from
// the watch cache) and paginated in pages of 500 (from the watch cache too,
// while nothing changes under configmaps).
func BenchmarkList10k(b *testing.B) {
	s := testserver.Start(b, testserver.Options{Storage: controlplane.StorageBolt})
	fill(b, s, 10000)
	c := newClient(s)
	b.Run("consistent", func(b *testing.B) {
		for b.Loop() {
			if n := listCount(b, c, s, cmPath); n != 10000 {
				b.Fatalf("listed %d", n)
			}
		}
	})
	b.Run("resourceVersion=0", func(b *testing.B) {
		for b.Loop() {
			if n := listCount(b, c, s, cmPath+"?resourceVersion=0"); n != 10000 {
				b.Fatalf("listed %d", n)
			}
		}
	})
	b.Run("paginated-500", func(b *testing.B) {
		for b.Loop() {
			total, cont := 0, ""
			for {
				var page struct {
					Metadata struct{ Continue string } `json:"metadata"`
					Items    []json.RawMessage         `json:"items"`
				}
				getJSON(b, c, s, cmPath+"?limit=500&continue="+cont, &page)
				total += len(page.Items)
				if cont = page.Metadata.Continue; cont == "" {
					break
				}
			}
			if total != 10000 {
				b.Fatalf("listed %d", total)
			}
		}
	})
}

func fill(b *testing.B, s *testserver.Server, n int) {
	b.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(s)
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if code, body, err := do(c, s, http.MethodPost, cmPath, configMapJSON(fmt.Sprintf("cm-%05d", i))); err != nil || code != http.StatusCreated {
					panic(fmt.Sprintf("fill: %d %s %v", code, body, err))
				}
			}
		}()
	}
	wg.Wait()
}

func listCount(b *testing.B, c *http.Client, s *testserver.Server, path string) int {
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	getJSON(b, c, s, path, &l)
	return len(l.Items)
}

func getJSON(b *testing.B, c *http.Client, s *testserver.Server, path string, v any) {
	code, body, err := do(c, s, http.MethodGet, path, nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("GET %s: %d %v", path, code, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWatchFanout: 1,000 watchers (over HTTP/2, 10 client connections
// as 10 informer processes would open) on one ConfigMap while it is updated
// 100 times a second for 5 seconds. Reports deliveries per second and the
// p50/p99 delivery latency from the moment the write was sent (the time is
// carried in the object, so the figure includes the write's own commit and
// fsync) to each watcher's receipt. One iteration is one whole run: use
// -benchtime=1x.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers, conns, rate, seconds = 1000, 10, 100, 5
	s := testserver.Start(b, testserver.Options{Storage: controlplane.StorageBolt, Tune: func(c *apiserver.Config) {
		c.MaxReadInFlight = 2000
	}})
	writer := newClient(s)
	if code, body, err := do(writer, s, http.MethodPost, cmPath, configMapJSON("hot")); err != nil || code != http.StatusCreated {
		b.Fatalf("create: %d %s %v", code, body, err)
	}
	for b.Loop() {
		runFanout(b, s, writer, watchers, conns, rate, seconds)
	}
}

func runFanout(b *testing.B, s *testserver.Server, writer *http.Client, watchers, conns, rate, seconds int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*http.Client, conns)
	for i := range clients {
		clients[i] = newClient(s)
		clients[i].Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"h2"}
	}
	latencies := make([][]time.Duration, watchers)
	var ready, done sync.WaitGroup
	var delivered atomic.Int64
	total := rate * seconds
	for w := range watchers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			watchOne(ctx, s, clients[w%conns], &ready, func(sent, at time.Time) bool {
				latencies[w] = append(latencies[w], at.Sub(sent))
				delivered.Add(1)
				return len(latencies[w]) < total
			})
		}()
	}
	ready.Wait()
	// A pool of writers keeps the offered rate even when one write is slow.
	start := time.Now()
	jobs := make(chan int)
	var writers sync.WaitGroup
	for range 8 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range jobs {
				patchHot(b, s, writer, i)
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range total {
		<-tick.C
		jobs <- i
	}
	tick.Stop()
	close(jobs)
	writers.Wait()
	writing := time.Since(start)
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(30 * time.Second):
		b.Fatalf("only %d of %d deliveries after 30s", delivered.Load(), total*watchers)
	}
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(total)/writing.Seconds(), "updates/s")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// watchOne watches the hot configmap from now and calls onEvent with each
// MODIFIED event's send time until it returns false.
func watchOne(ctx context.Context, s *testserver.Server, c *http.Client, ready *sync.WaitGroup, onEvent func(sent, at time.Time) bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+cmPath+"?watch=1&fieldSelector=metadata.name%3Dhot", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := c.Do(req)
	if err != nil {
		ready.Done()
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the initial ADDED of the hot configmap
	ready.Done()
	for sc.Scan() {
		at := time.Now()
		sent, ok := sentTime(sc.Bytes())
		if !ok {
			continue // not a MODIFIED event of the hot configmap
		}
		if !onEvent(sent, at) {
			return
		}
	}
}

// sentTime extracts data.sent from a MODIFIED event line with a byte search:
// the watchers run in the benchmark's process, so they do as little as
// possible to leave the CPU to the server.
func sentTime(line []byte) (time.Time, bool) {
	if !bytes.HasPrefix(line, []byte(`{"type":"MODIFIED"`)) {
		return time.Time{}, false
	}
	const key = `"sent":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// patchHot sets the hot configmap's data to step i and the send time.
func patchHot(b *testing.B, s *testserver.Server, c *http.Client, i int) {
	patch := []byte(`{"data":{"n":"` + strconv.Itoa(i) + `","sent":"` + strconv.FormatInt(time.Now().UnixNano(), 10) + `"}}`)
	req, _ := http.NewRequest(http.MethodPatch, s.URL+cmPath+"/hot", bytes.NewReader(patch))
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("patch: %d", resp.StatusCode)
	}
}
