package audit

import "github.com/prometheus/client_golang/prometheus"

// metrics are kube-apiserver's audit metrics.
type metrics struct {
	events prometheus.Counter
	errors prometheus.Counter
	level  *prometheus.CounterVec
	// rejected counts requests refused because their event could not be
	// written.
	rejected prometheus.Counter
}

func newMetrics() *metrics {
	return &metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "apiserver_audit", Name: "event_total",
			Help: "Counter of audit events generated and sent to the audit backend.",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "apiserver_audit", Name: "error_total",
			Help:        "Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
			ConstLabels: prometheus.Labels{"plugin": "log"},
		}),
		level: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "apiserver_audit", Name: "level_total",
			Help: "Counter of policy levels for audit events (1 per request).",
		}, []string{"level"}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "apiserver_audit", Name: "requests_rejected_total",
			Help: "Counter of apiserver requests rejected due to an error in audit logging backend.",
		}),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.events, m.errors, m.level, m.rejected}
}
