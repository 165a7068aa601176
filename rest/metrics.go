package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestDurationBuckets are client-go's buckets of
// rest_client_request_duration_seconds.
var requestDurationBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}

// errorCode is the code label of an attempt that got no HTTP answer, as
// client-go's.
const errorCode = "<error>"

// Metrics are client-go's request metrics, under its names, labels and
// buckets, so that its dashboards work:
//
//   - rest_client_requests_total{code,method,host}: one per attempt (a
//     retried request counts each try), code the HTTP status or "<error>"
//     when no answer came (transport error);
//   - rest_client_request_duration_seconds{verb,host}: one per call, from
//     its start (rate-limiter waits and retries included) to the final
//     answer; verb is the HTTP method.
//
// host is the host:port of the server asked. Create one per registry with
// NewMetrics and share it between clients through Config.Metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics creates the rest_client_* families and registers them on
// reg. Registering twice on one registry fails.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host."},
			[]string{"code", "method", "host"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds. Broken down by verb, and host.",
			Buckets: requestDurationBuckets}, []string{"verb", "host"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register rest client metrics: %w", err)
		}
	}
	return m, nil
}

// countResult counts one attempt.
func (m *Metrics) countResult(method, host string, resp *http.Response, err error) {
	if m == nil {
		return
	}
	code := errorCode
	if err == nil && resp != nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	m.requests.WithLabelValues(code, method, host).Inc()
}

// observeLatency records one call's duration.
func (m *Metrics) observeLatency(method, host string, d time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(method, host).Observe(d.Seconds())
}
