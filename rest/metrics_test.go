package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

// TestMetrics: every attempt is counted by code, method and host (a
// retried 503 then a 200: two attempts), and every call's duration is
// observed once by verb and host, under client-go's names and buckets.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := rest.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c, s := fakeClient(t, rest.Config{QPS: -1, Metrics: m}, func(n int) (int, string) {
		if n == 0 {
			return http.StatusServiceUnavailable, "1"
		}
		return http.StatusOK, ""
	})
	if err := run(s.clock, func() error {
		_, err := configMaps(c).Get(context.Background(), "a", metav1.GetOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.Host())
	if err != nil {
		t.Fatal(err)
	}
	families := gather(t, reg)

	counts := map[string]float64{}
	for _, mt := range families["rest_client_requests_total"].GetMetric() {
		l := labels(mt)
		if l["host"] != u.Host || l["method"] != "GET" {
			t.Errorf("requests_total labels %v", l)
		}
		counts[l["code"]] = mt.GetCounter().GetValue()
	}
	if len(counts) != 2 || counts["503"] != 1 || counts["200"] != 1 {
		t.Errorf("requests_total by code = %v, want one 503 and one 200", counts)
	}

	hs := families["rest_client_request_duration_seconds"].GetMetric()
	if len(hs) != 1 {
		t.Fatalf("%d duration series, want 1", len(hs))
	}
	if l := labels(hs[0]); l["host"] != u.Host || l["verb"] != "GET" || len(l) != 2 {
		t.Errorf("duration labels %v, want verb and host", l)
	}
	h := hs[0].GetHistogram()
	// One call of 1 s on the fake clock: the Retry-After wait.
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 1 {
		t.Errorf("duration count %d sum %v, want 1 and 1", h.GetSampleCount(), h.GetSampleSum())
	}
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if want := []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}; !slices.Equal(bounds, want) {
		t.Errorf("buckets %v, want client-go's %v", bounds, want)
	}
	if _, err := rest.NewMetrics(reg); err == nil {
		t.Error("registering twice on one registry succeeded")
	}
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
