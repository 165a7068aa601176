package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// The multi-server benchmarks compare, in one run, one API server on the
// embedded bolt store with one and two API servers on a 3-member etcd
// (fsync on, all on this machine). With two servers the writers are split
// between them and watchers sit on both, so a watcher on one server sees
// writes made through the other.
//
//	go test ./bench -run '^$' -bench 'MultiServer' -benchtime 1x

type deployment struct {
	name    string
	servers int
	etcd    bool
}

var deployments = []deployment{{"bolt/1-server", 1, false}, {"etcd3/1-server", 1, true}, {"etcd3/2-servers", 2, true}}

var prefixSeq atomic.Int64

// startDeployment starts d's servers; etcd deployments use c under a fresh
// key prefix, sharing one PKI directory.
func startDeployment(b *testing.B, d deployment, c *etcdtest.Cluster) []*testserver.Server {
	if !d.etcd {
		return []*testserver.Server{testserver.Start(b, testserver.Options{Storage: controlplane.StorageBolt,
			Tune: func(c *apiserver.Config) { c.MaxReadInFlight = 2000 }})}
	}
	opts := testserver.Options{Storage: controlplane.StorageEtcd, EtcdEndpoints: c.Endpoints(),
		EtcdPrefix: fmt.Sprintf("/bench-%d", prefixSeq.Add(1)), PKIDir: b.TempDir(),
		Tune: func(c *apiserver.Config) { c.MaxReadInFlight = 2000 }}
	var out []*testserver.Server
	for range d.servers {
		out = append(out, testserver.Start(b, opts))
	}
	return out
}

// BenchmarkMultiServerWrites: creates of 1 KiB ConfigMaps from 16
// concurrent clients (each its own connection pool), client i writing
// through server i mod servers. Reports creates/s. One iteration is 4,000
// creates.
func BenchmarkMultiServerWrites(b *testing.B) {
	const clients, creates = 16, 4000
	c := etcdtest.StartCluster(b, 3)
	for _, d := range deployments {
		b.Run(d.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				srv := startDeployment(b, d, c)
				b.StartTimer()
				start := time.Now()
				var next atomic.Int64
				var wg sync.WaitGroup
				for i := range clients {
					s := srv[i%len(srv)]
					wg.Add(1)
					go func() {
						defer wg.Done()
						hc := newClient(s)
						for n := next.Add(1); n <= creates; n = next.Add(1) {
							code, body, err := do(hc, s, http.MethodPost, cmPath, configMapJSON(fmt.Sprintf("cm-%d", n)))
							if err != nil || code != http.StatusCreated {
								b.Errorf("create: %d %s %v", code, body, err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(creates/time.Since(start).Seconds(), "creates/s")
			}
		})
	}
}

// BenchmarkMultiServerWatchLatency: 20 watchers per server watch the
// ConfigMaps of a namespace while 8 writers patch them 200 times a second
// in all, for 3 seconds: writer j patches its own ConfigMap hot-j through
// server j mod servers (one writer per object: no write conflicts). Every
// watcher receives every write. Reports the
// p50/p99 latency from the moment a write was sent (carried in the object)
// to each watcher's receipt. One iteration is one whole run.
func BenchmarkMultiServerWatchLatency(b *testing.B) {
	c := etcdtest.StartCluster(b, 3)
	for _, d := range deployments {
		b.Run(d.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				srv := startDeployment(b, d, c)
				b.StartTimer()
				runLatency(b, srv, 20, 200, 3)
			}
		})
	}
}

func runLatency(b *testing.B, srv []*testserver.Server, perServer, rate, seconds int) {
	const writers = 8
	writer := make([]*http.Client, writers)
	for j := range writers {
		s := srv[j%len(srv)]
		writer[j] = newClient(s)
		if code, body, err := do(writer[j], s, http.MethodPost, cmPath, configMapJSON(fmt.Sprintf("hot-%d", j))); err != nil || code != http.StatusCreated {
			b.Fatalf("create: %d %s %v", code, body, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	total := rate * seconds
	watchers := perServer * len(srv)
	latencies := make([][]time.Duration, watchers)
	var ready, done sync.WaitGroup
	for w := range watchers {
		s := srv[w%len(srv)]
		hc := newClient(s)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			watchFromNow(ctx, s, hc, &ready, func(sent, at time.Time) bool {
				latencies[w] = append(latencies[w], at.Sub(sent))
				return len(latencies[w]) < total
			})
		}()
	}
	ready.Wait()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for j := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				patchOne(b, srv[j%len(srv)], writer[j], fmt.Sprintf("hot-%d", j), i)
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
	wg.Wait()
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(30 * time.Second):
		b.Fatal("watchers did not receive every write within 30s")
	}
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// watchFromNow watches the namespace's ConfigMaps (a consistent start: the
// initial ADDED events, then changes) and calls onEvent with each MODIFIED
// event's send time until it returns false.
func watchFromNow(ctx context.Context, s *testserver.Server, c *http.Client, ready *sync.WaitGroup, onEvent func(sent, at time.Time) bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+cmPath+"?watch=1", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := c.Do(req)
	ready.Done()
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		panic(fmt.Sprintf("watch: %d", resp.StatusCode))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		at := time.Now()
		if sent, ok := sentTime(sc.Bytes()); ok && !onEvent(sent, at) {
			return
		}
	}
}

// patchOne sets ConfigMap name's data to step i and the send time.
func patchOne(b *testing.B, s *testserver.Server, c *http.Client, name string, i int) {
	patch := fmt.Appendf(nil, `{"data":{"n":"%d","sent":"%d"}}`, i, time.Now().UnixNano())
	req, _ := http.NewRequest(http.MethodPatch, s.URL+cmPath+"/"+name, bytes.NewReader(patch))
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
		b.Errorf("patch %s: %d", name, resp.StatusCode)
	}
}
