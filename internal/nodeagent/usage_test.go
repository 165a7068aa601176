package nodeagent_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// scrape GETs path on the agent's kubelet endpoint with a client
// certificate of the server's CA, as the API server does.
func (e *env) scrape(path string) (int, string) {
	e.t.Helper()
	cert, err := e.srv.API.CA().EnsureClient(e.t.TempDir(), "scraper", "scraper", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}} //nolint:gosec // self-signed endpoint
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + e.agent.Endpoint() + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// resourceMetrics scrapes node's /metrics/resource.
func (e *env) resourceMetrics(node string) string {
	e.t.Helper()
	code, body := e.scrape(nodeagent.ResourceMetricsPath(node))
	if code != http.StatusOK {
		e.t.Fatalf("scrape %s: %d %s", node, code, body)
	}
	return body
}

// sample returns the line of the metric with labels (without its value).
func sample(t *testing.T, text, series string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, series+" ") {
			return strings.TrimPrefix(l, series+" ")
		}
	}
	t.Fatalf("no %s in\n%s", series, text)
	return ""
}

// Containers use their requests, or the usage their pod's annotations set,
// read live: the cpu counter integrates the usage over simulated time.
func TestResourceMetrics(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 2})
	p := newPod("web", corev1.RestartPolicyAlways, "app=busybox", "side=busybox")
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	p.Annotations = map[string]string{nodeagent.AnnotationCPUUsage: "side=50m", nodeagent.AnnotationMemoryUsage: "side=1Mi"}
	e.createBound(p, "node-1")
	e.waitPod("web", "running", running)

	ts := func() string { return " " + itoa(e.clk.Now().UnixMilli()) }
	e.clk.Step(10 * time.Second)
	text := e.resourceMetrics("node-1")
	if got := sample(t, text, `container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"}`); got != "2"+ts() {
		t.Errorf("app cpu after 10 s at 200m: %q", got)
	}
	if got := sample(t, text, `container_cpu_usage_seconds_total{container="side",namespace="default",pod="web"}`); got != "0.5"+ts() {
		t.Errorf("side cpu after 10 s at 50m: %q", got)
	}
	if got := sample(t, text, `node_cpu_usage_seconds_total`); got != "2.5"+ts() {
		t.Errorf("node cpu after 10 s at 250m: %q", got)
	}
	if got := sample(t, text, `container_memory_working_set_bytes{container="app",namespace="default",pod="web"}`); got != "6.7108864e+07"+ts() {
		t.Errorf("app memory: %q", got)
	}
	if got := sample(t, text, `pod_memory_working_set_bytes{namespace="default",pod="web"}`); got != "6.8157440e+07"+ts() && got != "6.815744e+07"+ts() {
		t.Errorf("pod memory: %q", got)
	}
	for _, fam := range []string{"# TYPE container_cpu_usage_seconds_total counter", "# TYPE node_cpu_usage_seconds_total counter",
		"# TYPE pod_cpu_usage_seconds_total counter", "# TYPE node_memory_working_set_bytes gauge", "resource_scrape_error 0"} {
		if !strings.Contains(text, fam) {
			t.Errorf("missing %q in\n%s", fam, text)
		}
	}
	if strings.Contains(e.resourceMetrics("node-0"), `pod="web"`) {
		t.Error("node-0 reports a pod of node-1")
	}

	// Raise the usage: it counts from when the agent saw the annotation.
	cur := e.getPod("web")
	cur.Annotations[nodeagent.AnnotationCPUUsage] = "1"
	if _, err := e.pods.Namespace("default").Update(ctx(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new usage seen", func() bool {
		e.clk.Step(time.Second)
		l := sample(t, e.resourceMetrics("node-1"), `container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"}`)
		return strings.HasPrefix(l, "3.") || strings.HasPrefix(l, "4")
	})
	before := e.resourceMetrics("node-1")
	e.clk.Step(5 * time.Second)
	after := e.resourceMetrics("node-1")
	app := `container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"}`
	if d := value(t, sample(t, after, app)) - value(t, sample(t, before, app)); d < 4.999 || d > 5.001 {
		t.Errorf("app cpu over 5 s at 1 core: %v", d)
	}

	// A deleted pod's usage stays in its node's counter.
	nodeBefore := value(t, sample(t, e.resourceMetrics("node-1"), "node_cpu_usage_seconds_total"))
	if err := e.pods.Namespace("default").Delete(ctx(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod gone from the scrape", func() bool {
		return !strings.Contains(e.resourceMetrics("node-1"), `pod="web"`)
	})
	e.clk.Step(5 * time.Second)
	if got := value(t, sample(t, e.resourceMetrics("node-1"), "node_cpu_usage_seconds_total")); got < nodeBefore {
		t.Errorf("node counter went back from %v to %v", nodeBefore, got)
	}

	// The unnamed path cannot tell the nodes apart.
	code, body := e.scrape("/metrics/resource")
	if code != http.StatusNotFound || !strings.Contains(body, "/node/<node>/metrics/resource") {
		t.Errorf("unnamed scrape: %d %s", code, body)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// value parses the value of a sample line ("v ts").
func value(t *testing.T, line string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(strings.Fields(line)[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
