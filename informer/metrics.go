package informer

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PendingNotificationsMetric is the full name of the gauge Metrics exports.
const PendingNotificationsMetric = "setpoint_informer_handler_pending_notifications"

// Metrics holds the informer metric families registered on one
// prometheus.Registerer. One Metrics serves any number of informers; pass
// it in Options.Metrics or FactoryOptions.Metrics.
//
// setpoint_informer_handler_pending_notifications{informer, handler} counts
// the notifications handed to a handler whose callback has not returned
// yet (queued ones plus the one running). A value that keeps growing names
// a handler that cannot keep up.
type Metrics struct {
	pending *prometheus.GaugeVec
}

// NewMetrics creates the metric families and registers them on reg.
// Registering twice on one registry fails.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: PendingNotificationsMetric,
			Help: "Notifications handed to an informer's event handler whose callback has not returned.",
		}, []string{"informer", "handler"}),
	}
	if err := reg.Register(m.pending); err != nil {
		return nil, fmt.Errorf("register informer metrics: %w", err)
	}
	return m, nil
}

// pendingGauge returns the series of one handler; nil when m is nil.
func (m *Metrics) pendingGauge(informer, handler string) prometheus.Gauge {
	if m == nil {
		return nil
	}
	return m.pending.WithLabelValues(informer, handler)
}
