package flowcontrol

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the apiserver_flowcontrol_* collectors, with
// kube-apiserver's names, help texts, labels and buckets.
type Metrics struct {
	rejectedTotal     *prometheus.CounterVec
	dispatchedTotal   *prometheus.CounterVec
	inqueueRequests   *prometheus.GaugeVec
	inqueueSeats      *prometheus.GaugeVec
	executingRequests *prometheus.GaugeVec
	executingSeats    *prometheus.GaugeVec
	waitDuration      *prometheus.HistogramVec
	queueLength       *prometheus.HistogramVec
	estimatedSeats    *prometheus.HistogramVec
	currentR          *prometheus.GaugeVec
	nominalLimit      *prometheus.GaugeVec
	currentLimit      *prometheus.GaugeVec
	lowerLimit        *prometheus.GaugeVec
	upperLimit        *prometheus.GaugeVec
}

const fcNamespace, fcSubsystem = "apiserver", "flowcontrol"

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: fcNamespace, Subsystem: fcSubsystem, Name: name, Help: help}, labels)
}

func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: fcNamespace, Subsystem: fcSubsystem, Name: name, Help: help, Buckets: buckets}, labels)
}

// NewMetrics builds the collectors and registers them on reg (nil
// registers nowhere, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		rejectedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: fcNamespace, Subsystem: fcSubsystem,
			Name: "rejected_requests_total", Help: "[BETA] Number of requests rejected by API Priority and Fairness subsystem"},
			[]string{"priority_level", "flow_schema", "reason"}),
		dispatchedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: fcNamespace, Subsystem: fcSubsystem,
			Name: "dispatched_requests_total", Help: "[BETA] Number of requests executed by API Priority and Fairness subsystem"},
			[]string{"priority_level", "flow_schema"}),
		inqueueRequests: gaugeVec("current_inqueue_requests",
			"[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem", "priority_level", "flow_schema"),
		inqueueSeats: gaugeVec("current_inqueue_seats",
			"[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem", "priority_level", "flow_schema"),
		executingRequests: gaugeVec("current_executing_requests",
			"[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
			"priority_level", "flow_schema"),
		executingSeats: gaugeVec("current_executing_seats",
			"[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
			"priority_level", "flow_schema"),
		waitDuration: histogramVec("request_wait_duration_seconds", "[BETA] Length of time a request spent waiting in its queue",
			[]float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}, "priority_level", "flow_schema", "execute"),
		queueLength: histogramVec("request_queue_length_after_enqueue",
			"[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
			[]float64{0, 10, 25, 50, 100, 250, 500, 1000}, "priority_level", "flow_schema"),
		estimatedSeats: histogramVec("work_estimated_seats",
			"[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
			[]float64{1, 2, 4, 10}, "priority_level", "flow_schema"),
		currentR:     gaugeVec("current_r", "[ALPHA] R(time of last change)", "priority_level"),
		nominalLimit: gaugeVec("nominal_limit_seats", "[BETA] Nominal number of execution seats configured for each priority level", "priority_level"),
		currentLimit: gaugeVec("current_limit_seats", "[ALPHA] current derived number of execution seats available to each priority level", "priority_level"),
		lowerLimit:   gaugeVec("lower_limit_seats", "[ALPHA] Configured lower bound on number of execution seats available to each priority level", "priority_level"),
		upperLimit:   gaugeVec("upper_limit_seats", "[ALPHA] Configured upper bound on number of execution seats available to each priority level", "priority_level"),
	}
	if reg != nil {
		reg.MustRegister(m.rejectedTotal, m.dispatchedTotal, m.inqueueRequests, m.inqueueSeats, m.executingRequests,
			m.executingSeats, m.waitDuration, m.queueLength, m.estimatedSeats, m.currentR, m.nominalLimit,
			m.currentLimit, m.lowerLimit, m.upperLimit)
	}
	return m
}

func (m *Metrics) rejected(pl, fs, reason string) {
	m.rejectedTotal.WithLabelValues(pl, fs, reason).Inc()
}

// dispatched counts a request that starts executing.
func (m *Metrics) dispatched(pl, fs string, seats int, _ time.Duration) {
	m.dispatchedTotal.WithLabelValues(pl, fs).Inc()
	m.executing(pl, fs, 1, seats)
}

func (m *Metrics) executing(pl, fs string, requests, seats int) {
	m.executingRequests.WithLabelValues(pl, fs).Add(float64(requests))
	m.executingSeats.WithLabelValues(pl, fs).Add(float64(seats))
}

// enqueued adds requests and seats to the in-queue gauges; a queue
// length of 0 or more is observed as the length after an enqueue.
func (m *Metrics) enqueued(pl, fs string, requests, seats, length int) {
	m.inqueueRequests.WithLabelValues(pl, fs).Add(float64(requests))
	m.inqueueSeats.WithLabelValues(pl, fs).Add(float64(seats))
	if length >= 0 {
		m.queueLength.WithLabelValues(pl, fs).Observe(float64(length))
	}
}

func (m *Metrics) waited(pl, fs string, execute bool, d time.Duration) {
	m.waitDuration.WithLabelValues(pl, fs, strconv.FormatBool(execute)).Observe(d.Seconds())
}

func (m *Metrics) estimated(pl, fs string, seats int) {
	m.estimatedSeats.WithLabelValues(pl, fs).Observe(float64(seats))
}

func (m *Metrics) setCurrentR(pl string, r float64) { m.currentR.WithLabelValues(pl).Set(r) }

func (m *Metrics) setLimits(pl string, l limits) {
	m.nominalLimit.WithLabelValues(pl).Set(float64(l.nominal))
	m.currentLimit.WithLabelValues(pl).Set(float64(l.current))
	m.lowerLimit.WithLabelValues(pl).Set(float64(l.lower))
	m.upperLimit.WithLabelValues(pl).Set(float64(l.upper))
}

// forgetLevel drops the limit gauges of a deleted priority level.
func (m *Metrics) forgetLevel(pl string) {
	for _, g := range []*prometheus.GaugeVec{m.nominalLimit, m.currentLimit, m.lowerLimit, m.upperLimit, m.currentR} {
		g.DeleteLabelValues(pl)
	}
}
