package controller

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Result label values of controller_runtime_reconcile_total.
const (
	resultSuccess      = "success"
	resultError        = "error"
	resultRequeue      = "requeue"
	resultRequeueAfter = "requeue_after"
)

// Metrics are the Prometheus metrics of any number of controllers, under
// the names controller-runtime uses so that its dashboards work, labelled
// by controller name. Create one per registry with NewMetrics and pass it
// to every controller through Options.Metrics.
type Metrics struct {
	total         *prometheus.CounterVec // controller, result
	errors        *prometheus.CounterVec // controller, class
	terminal      *prometheus.CounterVec // controller
	dropped       *prometheus.CounterVec // controller
	panics        *prometheus.CounterVec // controller
	duration      *prometheus.HistogramVec
	maxConcurrent *prometheus.GaugeVec
	active        *prometheus.GaugeVec
}

// NewMetrics creates the controller metric families and registers them on
// reg. Registering twice on one registry fails.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	ctrl := []string{"controller"}
	m := &Metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total",
			Help: "Reconciliations per controller and result (success, error, requeue, requeue_after)."},
			[]string{"controller", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_errors_total",
			Help: "Reconciliations that returned an error, by error class (terminal, panic, conflict, invalid, bad_request, forbidden, not_found, other)."},
			[]string{"controller", "class"}),
		terminal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Reconciliations that returned an error that is not retried (terminal, or a class the controller does not retry)."}, ctrl),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_retries_exhausted_total",
			Help: "Requests dropped after the controller's MaxRetries failed retries."}, ctrl),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_panics_total",
			Help: "Reconciliations that panicked; the panic was recovered and retried."}, ctrl),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "controller_runtime_reconcile_time_seconds",
			Help: "Seconds per reconciliation.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
				0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}}, ctrl),
		maxConcurrent: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Worker count of each controller."}, ctrl),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers",
			Help: "Workers currently reconciling."}, ctrl),
	}
	for _, c := range []prometheus.Collector{m.total, m.errors, m.terminal, m.dropped, m.panics, m.duration, m.maxConcurrent, m.active} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register controller metrics: %w", err)
		}
	}
	return m, nil
}

// ctrlMetrics are one controller's children of Metrics; the zero value
// (no Metrics configured) records nothing.
type ctrlMetrics struct {
	on                                  bool
	success, failure, requeue, reqAfter prometheus.Counter
	terminal, dropped, panics           prometheus.Counter
	errors                              map[ErrorClass]prometheus.Counter
	duration                            prometheus.Observer
	active                              prometheus.Gauge
}

// forController resolves (and so exports at zero) every series of one
// controller and sets its worker count.
func (m *Metrics) forController(name string, workers int) ctrlMetrics {
	if m == nil {
		return ctrlMetrics{}
	}
	m.maxConcurrent.WithLabelValues(name).Set(float64(workers))
	errs := make(map[ErrorClass]prometheus.Counter, len(errorClasses))
	for _, class := range errorClasses {
		errs[class] = m.errors.WithLabelValues(name, string(class))
	}
	return ctrlMetrics{
		on:       true,
		success:  m.total.WithLabelValues(name, resultSuccess),
		failure:  m.total.WithLabelValues(name, resultError),
		requeue:  m.total.WithLabelValues(name, resultRequeue),
		reqAfter: m.total.WithLabelValues(name, resultRequeueAfter),
		errors:   errs,
		terminal: m.terminal.WithLabelValues(name),
		dropped:  m.dropped.WithLabelValues(name),
		panics:   m.panics.WithLabelValues(name),
		duration: m.duration.WithLabelValues(name),
		active:   m.active.WithLabelValues(name),
	}
}

func (c ctrlMetrics) inc(counter prometheus.Counter) {
	if c.on {
		counter.Inc()
	}
}

// countError counts one error of class.
func (c ctrlMetrics) countError(class ErrorClass) {
	if c.on {
		c.errors[class].Inc()
	}
}

func (c ctrlMetrics) observe(seconds float64) {
	if c.on {
		c.duration.Observe(seconds)
	}
}

func (c ctrlMetrics) activeAdd(d float64) {
	if c.on {
		c.active.Add(d)
	}
}
