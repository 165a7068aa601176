package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// BenchmarkWatchGetPut: N watchers (over HTTP/2, from one client, which
// opens a connection per 100 streams, the server's limit, as one client-go
// clientset does) on one ConfigMap while a
// single writer, on its own connection, runs a get+put loop on it for 5
// seconds, as the side-by-side benchmark of issue 16 does. Reports the
// writer's get+put rate and the p50/p99/max delivery latency from the put's
// send time (carried in the object) to each watcher's receipt. One iteration
// is one whole run: use -benchtime=1x.
func BenchmarkWatchGetPut(b *testing.B) {
	for _, watchers := range []int{500, 2000} {
		b.Run("watchers="+strconv.Itoa(watchers), func(b *testing.B) {
			s := testserver.Start(b, testserver.Options{Storage: controlplane.StorageBolt, Tune: func(c *apiserver.Config) {
				c.MaxReadInFlight = 4000
			}})
			writer := newClient(s)
			writer.Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"h2"}
			if code, body, err := do(writer, s, http.MethodPost, cmPath, configMapJSON("hot")); err != nil || code != http.StatusCreated {
				b.Fatalf("create: %d %s %v", code, body, err)
			}
			for b.Loop() {
				runGetPut(b, s, writer, watchers, getPutDuration)
			}
		})
	}
}

func runGetPut(b *testing.B, s *testserver.Server, writer *http.Client, watchers int, d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wc := newClient(s)
	wc.Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"h2"}
	latencies := make([][]time.Duration, watchers)
	var ready, done sync.WaitGroup
	var stopAt atomic.Int64 // the last put's step; watchers end once they saw it
	stopAt.Store(-1)
	for w := range watchers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			watchOne(ctx, s, wc, &ready, func(sent, at time.Time) bool {
				latencies[w] = append(latencies[w], at.Sub(sent))
				last := stopAt.Load()
				return last < 0 || int64(len(latencies[w])) < last
			})
		}()
	}
	ready.Wait()
	cpu0 := processCPU(b)
	start := time.Now()
	puts := 0
	for time.Since(start) < d {
		getPutHot(b, s, writer, puts)
		puts++
	}
	writing := time.Since(start)
	cpu := processCPU(b) - cpu0
	stopAt.Store(int64(puts))
	// One more put wakes watchers that had already seen every event.
	getPutHot(b, s, writer, puts)
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(30 * time.Second):
		b.Fatalf("watchers did not see all %d puts within 30s", puts)
	}
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l[:min(len(l), puts)]...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(puts)/writing.Seconds(), "getput/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(puts), "cpu-ms/put")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// getPutHot reads the hot configmap and writes it back with step i and the
// send time (a compare-and-swap on the resourceVersion it read).
func getPutHot(b *testing.B, s *testserver.Server, c *http.Client, i int) {
	code, body, err := do(c, s, http.MethodGet, cmPath+"/hot", nil)
	if err != nil || code != http.StatusOK {
		b.Fatalf("get: %d %v", code, err)
	}
	var cm map[string]any
	if err := json.Unmarshal(body, &cm); err != nil {
		b.Fatal(err)
	}
	cm["data"] = map[string]any{"n": strconv.Itoa(i), "sent": strconv.FormatInt(time.Now().UnixNano(), 10)}
	out, err := json.Marshal(cm)
	if err != nil {
		b.Fatal(err)
	}
	code, body, err = do(c, s, http.MethodPut, cmPath+"/hot", out)
	if err != nil || code != http.StatusOK {
		b.Fatalf("put: %d %s %v", code, bytes.TrimSpace(body), err)
	}
}

// processCPU is the CPU time (user + system) the process has used: the
// server and the clients, which share the process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// getPutDuration is how long the writer's loop runs.
const getPutDuration = 5 * time.Second
