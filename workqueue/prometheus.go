package workqueue

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PrometheusMetricsProvider is a MetricsProvider exporting the metric names
// client-go's workqueue uses (subsystem "workqueue"), labelled by queue name,
// so existing dashboards and alerts keep working.
type PrometheusMetricsProvider struct {
	depth                   *prometheus.GaugeVec
	adds                    *prometheus.CounterVec
	latency                 *prometheus.HistogramVec
	workDuration            *prometheus.HistogramVec
	unfinished              *prometheus.GaugeVec
	longestRunningProcessor *prometheus.GaugeVec
	retries                 *prometheus.CounterVec
}

// NewPrometheusMetricsProvider creates the metric families and registers them
// on reg. One provider serves any number of queues with distinct names.
func NewPrometheusMetricsProvider(reg prometheus.Registerer) (*PrometheusMetricsProvider, error) {
	const sub = "workqueue"
	labels := []string{"name"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	p := &PrometheusMetricsProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "depth",
			Help: "Items waiting in the queue to be handed to a worker."}, labels),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "adds_total",
			Help: "Adds that made an item pending; duplicates of a pending item are not counted."}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "queue_duration_seconds",
			Help: "Seconds an item waited in the queue between add and Get.", Buckets: buckets}, labels),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "work_duration_seconds",
			Help: "Seconds a worker held an item, from Get to Done.", Buckets: buckets}, labels),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "unfinished_work_seconds",
			Help: "Summed seconds that items currently held by workers have been held; grows while work is stuck."}, labels),
		longestRunningProcessor: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "longest_running_processor_seconds",
			Help: "Seconds the longest-held item currently with a worker has been held."}, labels),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "retries_total",
			Help: "Delayed and rate-limited adds."}, labels),
	}
	for _, c := range []prometheus.Collector{p.depth, p.adds, p.latency, p.workDuration,
		p.unfinished, p.longestRunningProcessor, p.retries} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register workqueue metrics: %w", err)
		}
	}
	return p, nil
}

// NewDepthMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewDepthMetric(name string) GaugeMetric {
	return p.depth.WithLabelValues(name)
}

// NewAddsMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewAddsMetric(name string) CounterMetric {
	return p.adds.WithLabelValues(name)
}

// NewLatencyMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewLatencyMetric(name string) HistogramMetric {
	return p.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewWorkDurationMetric(name string) HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric {
	return p.longestRunningProcessor.WithLabelValues(name)
}

// NewRetriesMetric implements MetricsProvider.
func (p *PrometheusMetricsProvider) NewRetriesMetric(name string) CounterMetric {
	return p.retries.WithLabelValues(name)
}
