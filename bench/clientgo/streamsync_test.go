package clientgo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cgcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/setpoint-dev/setpoint/compat/procstat"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// The streaming-sync benchmark serves streamObjects ConfigMaps of about
// 1 KiB each, in one namespace, from a `setpoint apiserver` process (bolt
// storage, durable as etcd is) and from the reference (etcd +
// kube-apiserver v1.37.2, package refcluster), and measures against both,
// in one run, alternating, the wall time and the CPU time of the server's
// processes and of the client (the steadier figure on a loaded machine):
//
//   - informer: a client-go ConfigMap informer with client-go's defaults
//     (protobuf, HTTP/2, gzip accepted, the streaming list
//     sendInitialEvents=true), from its start until HasSynced (which
//     client-go polls every 100 ms);
//   - watchlist: the same streaming list through client-go's typed Watch,
//     read until the initial-events-end bookmark (transport and client-go's
//     decoding, no informer store);
//   - raw/<encoding>/<protocol>: the streaming list's bytes alone, split into
//     frames but not decoded, over HTTP/2 and HTTP/1.1, JSON and protobuf
//     (server encoding and transport only).
//
// Set SETPOINT_STREAM_OBJECTS to change the number of objects (default
// 10,000) and SETPOINT_REFERENCE_BIN_DIR to take the reference binaries from
// a directory (otherwise refcluster builds them), SETPOINT_BENCH_KLOG_V to
// see client-go's logs at that verbosity, SETPOINT_STREAM_ONLY=setpoint or
// kube-apiserver to measure one server alone (for a profile of the client
// against it), SETPOINT_STREAM_BASELINE_BIN to add a third server, that
// setpoint executable (e.g. built from main: before and after in one
// run). Run with
//
//	go test -run '^$' -bench BenchmarkStreamingSync -benchtime 5x
const (
	streamNamespace = "h2sync"
	streamDataBytes = 1024
)

func streamObjects() int {
	if n, err := strconv.Atoi(os.Getenv("SETPOINT_STREAM_OBJECTS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

// streamTarget is one loaded server.
type streamTarget struct {
	name string
	cfg  *rest.Config
	stop func()
	// pids are the server's processes (for the reference etcd and
	// kube-apiserver), whose CPU time a sync is charged with.
	pids []int
}

var (
	streamTargetsOnce sync.Once
	streamTargetList  []*streamTarget
	streamTargetsErr  error
	streamStops       []func()
)

// streamTargets starts and loads both servers once per benchmark binary.
func streamTargets(b *testing.B) []*streamTarget {
	if v := os.Getenv("SETPOINT_BENCH_KLOG_V"); v != "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("v", v)
	}
	streamTargetsOnce.Do(func() { streamTargetList, streamTargetsErr = startStreamTargets() })
	if streamTargetsErr != nil {
		b.Fatal(streamTargetsErr)
	}
	return streamTargetList
}

func startStreamTargets() ([]*streamTarget, error) {
	only := os.Getenv("SETPOINT_STREAM_ONLY")
	var targets []*streamTarget
	starts := []struct {
		name string
		fn   func() (*streamTarget, error)
	}{{"setpoint", func() (*streamTarget, error) { return startSetpointTarget("setpoint", "") }},
		{"kube-apiserver", startReferenceTarget}}
	if bin := os.Getenv("SETPOINT_STREAM_BASELINE_BIN"); bin != "" {
		starts = append(starts, struct {
			name string
			fn   func() (*streamTarget, error)
		}{"baseline", func() (*streamTarget, error) { return startSetpointTarget("baseline", bin) }})
	}
	for _, start := range starts {
		if only != "" && only != start.name {
			continue
		}
		t, err := start.fn()
		if err != nil {
			return nil, err
		}
		streamStops = append(streamStops, t.stop)
		if err := loadConfigMaps(t.cfg, streamObjects()); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

func stopStreamTargets() {
	for _, stop := range streamStops {
		stop()
	}
}

// startSetpointTarget starts `setpoint apiserver` built from this
// repository, or the executable bin when set.
func startSetpointTarget(name, bin string) (*streamTarget, error) {
	dir, err := os.MkdirTemp("", "setpoint-stream-bench")
	if err != nil {
		return nil, err
	}
	cmd, err := startSetpointProcess(dir, "bolt", bin)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	kubeconfig := filepath.Join(dir, "data", "kubeconfig")
	if _, err := waitReady(kubeconfig); err != nil {
		stop()
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		stop()
		return nil, err
	}
	return &streamTarget{name: name, cfg: cfg, stop: stop, pids: []int{cmd.Process.Pid}}, nil
}

func startReferenceTarget() (*streamTarget, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := refcluster.Start(ctx, refcluster.Options{EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		return nil, fmt.Errorf("start the reference: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	var pids []int
	for _, p := range c.Processes() {
		pids = append(pids, p.PID)
	}
	return &streamTarget{name: "kube-apiserver", cfg: cfg, stop: func() { _ = c.Stop() }, pids: pids}, nil
}

// loadConfigMaps creates the namespace and n ConfigMaps of streamDataBytes
// of data each, with 32 concurrent clients.
func loadConfigMaps(base *rest.Config, n int) error {
	cfg := rest.CopyConfig(base)
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: streamNamespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	data := strings.Repeat("x", streamDataBytes)
	const workers = 32
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Labels: map[string]string{"bench": "h2sync"}},
					Data:       map[string]string{"payload": data},
				}
				if _, err := cs.CoreV1().ConfigMaps(streamNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create configmap %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkStreamingSync: see the comment on streamNamespace's block.
// Each case alternates between the servers within one b.N loop, so both
// see the same machine load; s-<server> is the mean time of one sync.
func BenchmarkStreamingSync(b *testing.B) {
	targets := streamTargets(b)
	n := streamObjects()
	cases := []struct {
		name string
		run  func(b *testing.B, cfg *rest.Config, n int) streamStats
	}{
		{"informer", syncInformer},
		{"watchlist", syncWatchList},
		{"raw/json/h2", rawStream("application/json", true)},
		{"raw/json/h1", rawStream("application/json", false)},
		{"raw/proto/h2", rawStream("application/vnd.kubernetes.protobuf", true)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			totals := make([]streamStats, len(targets))
			for round := range b.N {
				for i, t := range targets {
					if round%2 == 1 { // alternate the order of the servers
						i = len(targets) - 1 - i
						t = targets[i]
					}
					server0, client0 := cpuOf(t.pids), selfCPU()
					st := c.run(b, t.cfg, n)
					st.serverCPU, st.clientCPU = cpuOf(t.pids)-server0, selfCPU()-client0
					line := fmt.Sprintf("%s: %s %v, CPU server %v client %v", c.name, t.name, st.elapsed.Round(time.Millisecond),
						st.serverCPU.Round(time.Millisecond), st.clientCPU.Round(time.Millisecond))
					if st.reads > 0 {
						line += fmt.Sprintf(", %d body reads, gzip %v", st.reads, st.gzip)
					}
					b.Log(line)
					totals[i].add(st)
				}
			}
			for i, t := range targets {
				b.ReportMetric(totals[i].elapsed.Seconds()/float64(b.N), "s-"+t.name)
				b.ReportMetric(totals[i].serverCPU.Seconds()/float64(b.N), "server-cpu-s-"+t.name)
				b.ReportMetric(totals[i].clientCPU.Seconds()/float64(b.N), "client-cpu-s-"+t.name)
				if totals[i].reads > 0 {
					b.ReportMetric(float64(totals[i].reads)/float64(b.N), "reads-"+t.name)
				}
			}
			if len(targets) >= 2 && totals[1].elapsed > 0 {
				for i, t := range targets {
					if i != 1 {
						b.ReportMetric(totals[i].elapsed.Seconds()/totals[1].elapsed.Seconds(), "ratio-"+t.name+"/ref")
					}
				}
			}
		})
	}
}

// streamStats is what one sync measured.
type streamStats struct {
	elapsed time.Duration
	// serverCPU and clientCPU are the CPU time (user and system) the
	// server's processes and this process used during the sync; on a
	// loaded machine they are steadier than the elapsed time.
	serverCPU, clientCPU time.Duration
	// reads is the number of Read calls on the response body that returned
	// data (raw cases only): about the number of HTTP/2 DATA frames, or of
	// TLS records over HTTP/1.1.
	reads int
	// gzip: the response came gzip-compressed (raw cases only).
	gzip bool
}

func (s *streamStats) add(o streamStats) {
	s.elapsed += o.elapsed
	s.serverCPU += o.serverCPU
	s.clientCPU += o.clientCPU
	s.reads += o.reads
}

// syncInformer starts a client-go ConfigMap informer with default settings
// and waits for its sync.
func syncInformer(b *testing.B, base *rest.Config, n int) streamStats {
	cs, err := kubernetes.NewForConfig(base)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(streamNamespace))
	inf := f.Core().V1().ConfigMaps().Informer()
	f.Start(ctx.Done())
	if !cgcache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("informer did not sync")
	}
	elapsed := time.Since(t0)
	if got := len(inf.GetIndexer().ListKeys()); got != n {
		b.Fatalf("informer holds %d ConfigMaps, want %d", got, n)
	}
	cancel()
	f.Shutdown()
	return streamStats{elapsed: elapsed}
}

// syncWatchList opens the streaming list with client-go's typed Watch and
// reads the decoded events until the initial-events-end bookmark.
func syncWatchList(b *testing.B, base *rest.Config, n int) streamStats {
	cs, err := kubernetes.NewForConfig(base)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	yes := true
	t0 := time.Now()
	w, err := cs.CoreV1().ConfigMaps(streamNamespace).Watch(ctx, metav1.ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	added := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			added++
		case watch.Bookmark:
			elapsed := time.Since(t0)
			if added != n {
				b.Fatalf("%d ADDED events before the bookmark, want %d", added, n)
			}
			return streamStats{elapsed: elapsed}
		default:
			b.Fatalf("unexpected %s event", ev.Type)
		}
	}
	b.Fatal("watch ended before the initial-events-end bookmark")
	return streamStats{}
}

// rawStream reads the streaming list's frames without decoding their
// objects, over HTTP/2 or HTTP/1.1.
func rawStream(accept string, h2 bool) func(b *testing.B, cfg *rest.Config, n int) streamStats {
	return func(b *testing.B, base *rest.Config, n int) streamStats {
		cfg := rest.CopyConfig(base)
		if !h2 {
			cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer hc.CloseIdleConnections()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		url := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + streamNamespace + "/configmaps" +
			"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		t0 := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			b.Fatalf("watch: %s: %s", resp.Status, body)
		}
		if got := resp.ProtoMajor == 2; got != h2 {
			b.Fatalf("response protocol %s, want HTTP/2 %v", resp.Proto, h2)
		}
		body := &countingReader{r: resp.Body}
		var added int
		if strings.Contains(accept, "protobuf") {
			added, err = readProtoUntilBookmark(body)
		} else {
			added, err = readJSONUntilBookmark(body)
		}
		elapsed := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if added != n {
			b.Fatalf("%d ADDED frames before the bookmark, want %d", added, n)
		}
		return streamStats{elapsed: elapsed, reads: body.reads, gzip: resp.Uncompressed}
	}
}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.reads++
	}
	return n, err
}

// readJSONUntilBookmark counts the ADDED lines up to the first BOOKMARK.
func readJSONUntilBookmark(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	added := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: read its rest, the prefix tells its type.
			rest, rerr := br.ReadBytes('\n')
			if rerr != nil {
				return added, rerr
			}
			line = append(append([]byte(nil), line...), rest...)
		} else if err != nil {
			return added, fmt.Errorf("after %d events: %w", added, err)
		}
		switch {
		case bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)):
			added++
		case bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)):
			return added, nil
		default:
			return added, fmt.Errorf("unexpected line %.80q", line)
		}
	}
}

// readProtoUntilBookmark counts the ADDED frames of a protobuf watch
// stream (4-byte length, metav1.WatchEvent) up to the first BOOKMARK.
func readProtoUntilBookmark(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [4]byte
	var buf []byte
	added := 0
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return added, fmt.Errorf("after %d events: %w", added, err)
		}
		size := int(binary.BigEndian.Uint32(hdr[:]))
		if cap(buf) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			return added, err
		}
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(buf); err != nil {
			return added, err
		}
		switch ev.Type {
		case string(watch.Added):
			added++
		case string(watch.Bookmark):
			return added, nil
		default:
			return added, fmt.Errorf("unexpected %s frame", ev.Type)
		}
	}
}

// cpuOf sums the user and system CPU time of the processes (one that
// has gone counts nothing).
func cpuOf(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		if s, err := procstat.Read(pid); err == nil {
			total += time.Duration(s.CPUSeconds * float64(time.Second))
		}
	}
	return total
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
