package workqueue

import "time"

// GaugeMetric is a value that goes up and down.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a gauge set to absolute values.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric only goes up.
type CounterMetric interface {
	Inc()
}

// HistogramMetric records observations, in seconds for durations.
type HistogramMetric interface {
	Observe(float64)
}

// MetricsProvider creates the metrics of one queue. Each method is called
// once per named queue, with that name; a provider serving several queues
// must return distinct (e.g. labelled) metrics per name. A provider that
// needs registration does it itself; the queue never touches a global
// registry.
type MetricsProvider interface {
	// NewDepthMetric: items added and not yet handed out by Get.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric: adds that made an item dirty (duplicates not counted).
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric: seconds from add to Get.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric: seconds from Get to Done.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric: summed age of items being processed.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric: age of the oldest item being
	// processed.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric: delayed and rate-limited adds.
	NewRetriesMetric(name string) CounterMetric
}

// queueMetrics are one queue's metrics. A nil *queueMetrics means metrics are
// off; the queue checks for nil rather than calling no-op methods so that an
// unmetered queue never reads the clock.
type queueMetrics struct {
	depth                   GaugeMetric
	adds                    CounterMetric
	latency                 HistogramMetric
	workDuration            HistogramMetric
	unfinishedWorkSeconds   SettableGaugeMetric
	longestRunningProcessor SettableGaugeMetric
	retries                 CounterMetric
}

func newQueueMetrics(name string, p MetricsProvider) *queueMetrics {
	if name == "" || p == nil {
		return nil
	}
	return &queueMetrics{
		depth:                   p.NewDepthMetric(name),
		adds:                    p.NewAddsMetric(name),
		latency:                 p.NewLatencyMetric(name),
		workDuration:            p.NewWorkDurationMetric(name),
		unfinishedWorkSeconds:   p.NewUnfinishedWorkSecondsMetric(name),
		longestRunningProcessor: p.NewLongestRunningProcessorSecondsMetric(name),
		retries:                 p.NewRetriesMetric(name),
	}
}

func (m *queueMetrics) added() {
	m.adds.Inc()
	m.depth.Inc()
}

func (m *queueMetrics) got(waited time.Duration) {
	m.depth.Dec()
	m.latency.Observe(waited.Seconds())
}

func (m *queueMetrics) done(worked time.Duration) {
	m.workDuration.Observe(worked.Seconds())
}

func (m *queueMetrics) retried() { m.retries.Inc() }

// updateMetricsLoop refreshes the unfinished-work gauges every period until
// ShutDown.
func (q *Queue[T]) updateMetricsLoop(period time.Duration) {
	defer q.wg.Done()
	t := q.clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-q.stopCh:
			return
		case <-t.C():
			q.updateUnfinishedWork()
		}
	}
}

// updateUnfinishedWork sets the unfinished-work gauges from the items being
// processed now.
func (q *Queue[T]) updateUnfinishedWork() {
	q.mu.Lock()
	now := q.clock.Now()
	var total, oldest float64
	for _, start := range q.startedAt {
		age := now.Sub(start).Seconds()
		total += age
		oldest = max(oldest, age)
	}
	q.mu.Unlock()
	q.metrics.unfinishedWorkSeconds.Set(total)
	q.metrics.longestRunningProcessor.Set(oldest)
}
