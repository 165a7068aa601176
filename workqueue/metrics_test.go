package workqueue

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestPrometheusMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p, err := NewPrometheusMetricsProvider(reg)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(epoch)
	q := NewWithConfig[string](Config{Name: "ctrl", Clock: clk, MetricsProvider: p})
	defer q.ShutDown()
	other := NewWithConfig[string](Config{Name: "other", Clock: clk, MetricsProvider: p})
	defer other.ShutDown()

	q.Add("a")
	q.Add("a") // duplicate: not an add
	q.Add("b")
	other.Add("x")
	gauge := func(v *prometheus.GaugeVec, name string) float64 {
		var m dto.Metric
		if err := v.WithLabelValues(name).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetGauge().GetValue()
	}
	counter := func(v *prometheus.CounterVec, name string) float64 {
		var m dto.Metric
		if err := v.WithLabelValues(name).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	if d := gauge(p.depth, "ctrl"); d != 2 {
		t.Fatalf("depth = %v, want 2", d)
	}
	if n := counter(p.adds, "ctrl"); n != 2 {
		t.Fatalf("adds = %v, want 2", n)
	}
	clk.Step(2 * time.Second)
	mustGet(t, q, "a")
	clk.Step(3 * time.Second)
	q.updateUnfinishedWork()
	if u := gauge(p.unfinished, "ctrl"); u != 3 {
		t.Fatalf("unfinished = %v, want 3", u)
	}
	mustGet(t, q, "b")
	clk.Step(time.Second)
	q.updateUnfinishedWork()
	if u, l := gauge(p.unfinished, "ctrl"), gauge(p.longestRunningProcessor, "ctrl"); u != 5 || l != 4 {
		t.Fatalf("unfinished, longest = %v, %v; want 5, 4", u, l)
	}
	q.Done("a")
	q.Done("b")
	q.AddAfter("c", time.Second)
	if d := gauge(p.depth, "ctrl"); d != 0 {
		t.Fatalf("depth = %v, want 0", d)
	}
	if n := counter(p.retries, "ctrl"); n != 1 {
		t.Fatalf("retries = %v, want 1", n)
	}

	h := histogram(t, reg, "workqueue_queue_duration_seconds", "ctrl")
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 2+5 {
		t.Fatalf("queue duration count, sum = %d, %v; want 2, 7", h.GetSampleCount(), h.GetSampleSum())
	}
	h = histogram(t, reg, "workqueue_work_duration_seconds", "ctrl")
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 4+1 {
		t.Fatalf("work duration count, sum = %d, %v; want 2, 5", h.GetSampleCount(), h.GetSampleSum())
	}
	if n := counter(p.adds, "other"); n != 1 {
		t.Fatalf("other queue adds = %v, want 1", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gathered := map[string]bool{}
	for _, mf := range mfs {
		gathered[mf.GetName()] = true
	}
	for _, name := range []string{"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
		"workqueue_work_duration_seconds", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "workqueue_retries_total"} {
		if !gathered[name] {
			t.Fatalf("metric %s not exported", name)
		}
	}
	if _, err := NewPrometheusMetricsProvider(reg); err == nil {
		t.Fatal("second registration on the same registry must fail")
	}
}

func histogram(t *testing.T, g prometheus.Gatherer, metric, queue string) *dto.Histogram {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == queue {
					return m.GetHistogram()
				}
			}
		}
	}
	t.Fatalf("no %s{name=%q}", metric, queue)
	return nil
}

func TestUnnamedQueueHasNoMetrics(t *testing.T) {
	q := NewWithConfig[string](Config{MetricsProvider: &PrometheusMetricsProvider{}})
	defer q.ShutDown()
	if q.metrics != nil {
		t.Fatal("unnamed queue must not record metrics")
	}
	q.Add("a")
	mustGet(t, q, "a")
	q.Done("a")
}
