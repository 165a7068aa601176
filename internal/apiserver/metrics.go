package apiserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, registered on a registry
// owned by the server (no global registration), with Kubernetes' names
// where Kubernetes has one.
type metrics struct {
	registry        *prometheus.Registry
	requests        *prometheus.CounterVec
	latency         *prometheus.HistogramVec
	inflight        *prometheus.GaugeVec
	watchers        *prometheus.GaugeVec
	watchEvents     *prometheus.CounterVec
	storageObjects  *prometheus.GaugeVec
	storageRevision prometheus.Gauge
	storageSize     prometheus.Gauge
}

// newMetrics registers the server's collectors on reg (a new registry
// when nil).
func newMetrics(reg *prometheus.Registry) *metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of API requests by verb, group, version, resource, subresource, scope and HTTP response code.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency of non-watch API requests by verb, group, version, resource, subresource and scope.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"verb", "group", "version", "resource", "subresource", "scope"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Requests currently being served, by kind (readOnly or mutating).",
		}, []string{"request_kind"}),
		watchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Open watch requests by group, version and resource.",
		}, []string{"verb", "group", "version", "resource", "scope"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "Watch events sent to clients, by group, version and kind.",
		}, []string{"group", "version", "kind"}),
		storageObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_storage_objects",
			Help: "Number of stored objects at the time of the last check, by resource.",
		}, []string{"resource"}),
		storageRevision: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "setpoint_storage_revision",
			Help: "The storage's current revision (the newest resourceVersion).",
		}),
		storageSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "apiserver_storage_size_bytes",
			Help: "Size of the storage database in bytes.",
		}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.inflight, m.watchers, m.watchEvents,
		m.storageObjects, m.storageRevision, m.storageSize,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
