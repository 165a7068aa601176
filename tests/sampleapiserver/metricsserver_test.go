package sampleapiserver

import (
	"os"
	"strings"
	"testing"
	"time"
)

// metricsServerManifest is metrics-server's release manifest from the
// real-world corpus (copied into compat's testdata).
const metricsServerManifest = "../../compat/testdata/realworld/10-metrics-server/metrics-server.yaml"

// TestMetricsServerConditions: metrics-server's manifests apply; its pods
// run on simulated nodes and serve no metrics API, so its APIService gets
// kube-aggregator's condition (False, FailedDiscoveryCheck, naming the
// pod's address), and
// setpoint's own metrics.k8s.io keeps answering.
func TestMetricsServerConditions(t *testing.T) {
	manifest := os.Getenv("METRICS_SERVER_MANIFEST")
	if manifest == "" {
		manifest = metricsServerManifest
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Fatalf("metrics-server's manifest: %v (set METRICS_SERVER_MANIFEST)", err)
	}
	c := startCluster(t, 1)
	c.must(t, "", "apply", "-f", manifest)
	var cond string
	waitFor(t, "the metrics-server APIService's condition", 90*time.Second, c.proc, func() bool {
		cond, _ = c.kubectl(t, "", "get", "apiservice", "v1beta1.metrics.k8s.io",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}|{.status.conditions[?(@.type=="Available")].reason}|{.status.conditions[?(@.type=="Available")].message}`)
		return strings.HasPrefix(cond, "False|FailedDiscoveryCheck|")
	})
	ip := strings.TrimSpace(c.must(t, "", "get", "pods", "-n", "kube-system", "-l", "k8s-app=metrics-server", "-o", "jsonpath={.items[0].status.podIP}"))
	url := "https://" + ip + ":10250/apis/metrics.k8s.io/v1beta1"
	// Whatever answers (or not) at the pod's address, the check names it.
	if !strings.HasPrefix(cond, "False|FailedDiscoveryCheck|failing or missing response from "+url+": ") {
		t.Errorf("condition %q, want FailedDiscoveryCheck on %s", cond, url)
	}
	if out := c.must(t, "", "get", "apiservice", "v1beta1.metrics.k8s.io"); !strings.Contains(out, "False (FailedDiscoveryCheck)") {
		t.Errorf("kubectl get apiservice:\n%s", out)
	}
	// The resource metrics setpoint serves itself keep answering.
	if out := c.must(t, "", "get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"); !strings.Contains(out, `"kind":"NodeMetricsList"`) {
		t.Errorf("metrics.k8s.io: %s", out)
	}
}
