package nodeagent

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The kubelet's /metrics/resource, per simulated node. One listener serves
// every node of the agent, so a request names its node in the path:
//
//	GET /node/{node}/metrics/resource
//
// (nodes/proxy reaches it as /api/v1/nodes/<n>/proxy/node/<n>/metrics/resource).
// A plain /metrics/resource cannot tell the nodes apart and answers 404
// naming the per-node path. The body is the kubelet's Prometheus text
// (version 0.0.4): the stable resource metrics with their HELP and TYPE
// lines, each sample with the scrape's timestamp in milliseconds.

// resourceMetricsPath is the per-node path of the resource metrics.
const resourceMetricsPath = "/metrics/resource"

// ResourceMetricsPath returns the path of node's /metrics/resource on the
// agent's kubelet endpoint.
func ResourceMetricsPath(node string) string { return "/node/" + node + resourceMetricsPath }

// serveResourceMetrics answers /node/{node}/metrics/resource.
func (a *Agent) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	n := a.byName[r.PathValue("node")]
	if n == nil {
		writeKubeletError(w, http.StatusNotFound, fmt.Sprintf("node %q is not simulated here", r.PathValue("node")))
		return
	}
	if !a.alive(n) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	now := a.clock.Now()
	samples, nodeCPU := a.scrapeNode(n, now)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	writeResourceMetrics(w, samples, nodeCPU, now)
}

// refuseUnnamedNode answers /metrics/resource without a node.
func (a *Agent) refuseUnnamedNode(w http.ResponseWriter, _ *http.Request) {
	writeKubeletError(w, http.StatusNotFound,
		"this kubelet endpoint serves every node simulated by one setpoint agent: ask /node/<node>/metrics/resource")
}

// metricFamily is the HELP and TYPE of one metric.
type metricFamily struct{ name, help, typ string }

var (
	famContainerCPU   = metricFamily{"container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds", "counter"}
	famContainerMem   = metricFamily{"container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", "gauge"}
	famContainerStart = metricFamily{"container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds", "gauge"}
	famNodeCPU        = metricFamily{"node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds", "counter"}
	famNodeMem        = metricFamily{"node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes", "gauge"}
	famPodCPU         = metricFamily{"pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", "counter"}
	famPodMem         = metricFamily{"pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes", "gauge"}
	famScrapeError    = metricFamily{"resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", "gauge"}
)

// writeResourceMetrics writes the samples in the kubelet's order: the
// container families, node, pod, then the scrape error.
func writeResourceMetrics(w io.Writer, samples []ctrSample, nodeCPU float64, now time.Time) {
	sort.Slice(samples, func(i, j int) bool {
		a, b := samples[i], samples[j]
		if a.ns != b.ns {
			return a.ns < b.ns
		}
		if a.pod != b.pod {
			return a.pod < b.pod
		}
		return a.name < b.name
	})
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	var b strings.Builder
	family := func(f metricFamily, each func()) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		each()
	}
	line := func(name, labels string, v float64) {
		if labels != "" {
			labels = "{" + labels + "}"
		}
		fmt.Fprintf(&b, "%s%s %s %s\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64), ts)
	}
	ctrLabels := func(s ctrSample) string {
		return fmt.Sprintf("container=%q,namespace=%q,pod=%q", s.name, s.ns, s.pod)
	}
	family(famContainerCPU, func() {
		for _, s := range samples {
			line(famContainerCPU.name, ctrLabels(s), s.cpuSeconds)
		}
	})
	family(famContainerMem, func() {
		for _, s := range samples {
			line(famContainerMem.name, ctrLabels(s), float64(s.memBytes))
		}
	})
	family(famContainerStart, func() {
		for _, s := range samples {
			line(famContainerStart.name, ctrLabels(s), float64(s.started.UnixNano())/1e9)
		}
	})
	var nodeMem int64
	type podSum struct {
		ns, pod string
		cpu     float64
		mem     int64
	}
	var pods []*podSum
	for _, s := range samples {
		nodeMem += s.memBytes
		if len(pods) == 0 || pods[len(pods)-1].ns != s.ns || pods[len(pods)-1].pod != s.pod {
			pods = append(pods, &podSum{ns: s.ns, pod: s.pod})
		}
		p := pods[len(pods)-1]
		p.cpu += s.cpuSeconds
		p.mem += s.memBytes
	}
	family(famNodeCPU, func() { line(famNodeCPU.name, "", nodeCPU) })
	family(famNodeMem, func() { line(famNodeMem.name, "", float64(nodeMem)) })
	family(famPodCPU, func() {
		for _, p := range pods {
			line(famPodCPU.name, fmt.Sprintf("namespace=%q,pod=%q", p.ns, p.pod), p.cpu)
		}
	})
	family(famPodMem, func() {
		for _, p := range pods {
			line(famPodMem.name, fmt.Sprintf("namespace=%q,pod=%q", p.ns, p.pod), float64(p.mem))
		}
	})
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s 0\n", famScrapeError.name, famScrapeError.help,
		famScrapeError.name, famScrapeError.typ, famScrapeError.name)
	_, _ = io.WriteString(w, b.String())
}
