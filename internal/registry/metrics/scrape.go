package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Families read from /metrics/resource.
const (
	ctrCPU   = "container_cpu_usage_seconds_total"
	ctrMem   = "container_memory_working_set_bytes"
	ctrStart = "container_start_time_seconds"
	nodeCPU  = "node_cpu_usage_seconds_total"
	nodeMem  = "node_memory_working_set_bytes"
)

var families = map[string]bool{ctrCPU: true, ctrMem: true, ctrStart: true, nodeCPU: true, nodeMem: true}

// scrapeTimeout bounds one node's scrape, as metrics-server's kubelet
// request timeout.
const scrapeTimeout = 10 * time.Second

// defaultKubeletPort is the kubelet's port when a node reports none.
const defaultKubeletPort = 10250

// ctrID names a container of a pod.
type ctrID struct{ ns, pod, name string }

// point is one container's cumulative cpu and working set at ts.
type point struct {
	cpu   float64
	mem   int64
	start time.Time
	ts    time.Time
}

// nodeScrape is what one scrape of a node gave.
type nodeScrape struct {
	ts             time.Time
	cpu            float64
	mem            int64
	hasCPU, hasMem bool
	ctrs           map[ctrID]point
}

// usage is a rate of cpu (nanocores) and a working set at a time, over a
// window.
type usage struct {
	nanoCores int64
	mem       int64
	ts        time.Time
	window    time.Duration
}

// nodeUsage is the usage of a node and of its containers.
type nodeUsage struct {
	node *usage
	ctrs map[ctrID]usage
}

// history is what a Scraper keeps of a node: its last scrape and the
// usage computed from it.
type history struct {
	last  *nodeScrape
	usage nodeUsage
}

// Scraper scrapes the nodes' kubelets and turns their counters into
// rates. It keeps the last scrape of each node (see the package
// documentation); safe for concurrent use.
type Scraper struct {
	mu    sync.Mutex
	nodes map[string]*history
}

// NewScraper returns a Scraper with no history.
func NewScraper() *Scraper { return &Scraper{nodes: map[string]*history{}} }

// Node scrapes node and returns its usage and its containers'.
func (s *Scraper) Node(ctx context.Context, env registry.Env, node *corev1.Node) (nodeUsage, error) {
	sc, err := scrapeNode(ctx, env, node)
	if err != nil {
		return nodeUsage{}, err
	}
	return s.rates(node.Name, sc), nil
}

// keepOnly forgets the history of nodes that are not in nodes (deleted).
func (s *Scraper) keepOnly(nodes []*corev1.Node) {
	names := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		names[n.Name] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.nodes {
		if !names[name] {
			delete(s.nodes, name)
		}
	}
}

// rates computes the usage of a new scrape of a node against the last one
// and keeps it, unless it is no newer.
func (s *Scraper) rates(name string, sc *nodeScrape) nodeUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.nodes[name]
	if h == nil {
		h = &history{}
		s.nodes[name] = h
	}
	if h.last != nil && !sc.ts.After(h.last.ts) {
		return h.usage
	}
	u := nodeUsage{ctrs: map[ctrID]usage{}}
	var sum int64
	for id, p := range sc.ctrs {
		var prev *point
		if h.last != nil {
			if q, ok := h.last.ctrs[id]; ok && q.start.Equal(p.start) && p.ts.After(q.ts) && p.cpu >= q.cpu {
				prev = &q
			}
		}
		cu, ok := ctrRate(p, prev)
		if !ok {
			continue
		}
		u.ctrs[id] = cu
		sum += cu.nanoCores
	}
	if sc.hasMem {
		n := &usage{mem: sc.mem, ts: sc.ts}
		if l := h.last; l != nil && l.hasCPU && sc.hasCPU && sc.cpu >= l.cpu && sc.ts.After(l.ts) {
			n.window = sc.ts.Sub(l.ts)
			n.nanoCores = int64(math.Round((sc.cpu - l.cpu) / n.window.Seconds() * 1e9))
		} else {
			n.nanoCores = sum
			for _, c := range u.ctrs {
				n.window = max(n.window, c.window)
			}
		}
		u.node = n
	}
	h.last, h.usage = sc, u
	return u
}

// ctrRate is a container's usage at p: its cpu rate since prev, or since
// it started when there is no prev.
func ctrRate(p point, prev *point) (usage, bool) {
	u := usage{mem: p.mem, ts: p.ts}
	from, base := p.start, 0.0
	if prev != nil {
		from, base = prev.ts, prev.cpu
	}
	if from.IsZero() || !p.ts.After(from) {
		return u, false
	}
	u.window = p.ts.Sub(from)
	u.nanoCores = int64(math.Round((p.cpu - base) / u.window.Seconds() * 1e9))
	return u, true
}

// scrapeNode GETs the node's /metrics/resource and reads it.
func scrapeNode(ctx context.Context, env registry.Env, node *corev1.Node) (*nodeScrape, error) {
	host := preferredAddress(node)
	if host == "" {
		return nil, fmt.Errorf("node %s has no address", node.Name)
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = defaultKubeletPort
	}
	base := url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port))}
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	body, code, err := get(ctx, env.NodeTransport(), base, "/node/"+node.Name+"/metrics/resource")
	if err == nil && code == http.StatusNotFound {
		body, code, err = get(ctx, env.NodeTransport(), base, "/metrics/resource")
	}
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", node.Name, err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("scrape node %s: HTTP %d", node.Name, code)
	}
	samples, err := parseText(body, families)
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", node.Name, err)
	}
	return collect(samples), nil
}

// get reads path at base; the body is read whole.
func get(ctx context.Context, rt http.RoundTripper, base url.URL, path string) (io.Reader, int, error) {
	base.Path = path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(b), resp.StatusCode, nil
}

// collect gathers the samples of one scrape by container.
func collect(samples []sample) *nodeScrape {
	sc := &nodeScrape{ctrs: map[ctrID]point{}}
	for _, s := range samples {
		if s.ts.After(sc.ts) {
			sc.ts = s.ts
		}
		switch s.name {
		case nodeCPU:
			sc.cpu, sc.hasCPU = s.value, true
		case nodeMem:
			sc.mem, sc.hasMem = int64(s.value), true
		case ctrCPU, ctrMem, ctrStart:
			id := ctrID{ns: s.labels["namespace"], pod: s.labels["pod"], name: s.labels["container"]}
			p := sc.ctrs[id]
			switch s.name {
			case ctrCPU:
				p.cpu, p.ts = s.value, s.ts
			case ctrMem:
				p.mem = int64(s.value)
			case ctrStart:
				sec := int64(s.value)
				p.start = time.Unix(sec, int64((s.value-float64(sec))*1e9)).Round(time.Millisecond)
			}
			sc.ctrs[id] = p
		}
	}
	for id, p := range sc.ctrs {
		if p.ts.IsZero() {
			p.ts = sc.ts
			sc.ctrs[id] = p
		}
	}
	return sc
}

// preferredAddress is the node's address of the first type in
// metrics-server's default preference.
func preferredAddress(node *corev1.Node) string {
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP,
		corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address
			}
		}
	}
	return ""
}
