package podautoscaler

import (
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-controller-manager's horizontal_pod_autoscaler_controller_*
// metrics.
type metrics struct {
	reconciles        *prometheus.CounterVec   // action, error
	reconcileDuration *prometheus.HistogramVec // action, error
	computations      *prometheus.CounterVec   // action, error, metric_type
	computeDuration   *prometheus.HistogramVec // action, error, metric_type
	count             prometheus.Gauge
	desiredReplicas   *prometheus.GaugeVec // namespace, hpa_name

	mu   sync.Mutex
	seen map[types.NamespacedName]bool
}

const subsystem = "horizontal_pod_autoscaler_controller"

const actionHelp = "The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label."

// newMetrics registers the metrics on reg; a second controller on the same
// registry shares the first one's collectors.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: "reconciliations_total",
			Help: "Number of reconciliations of HPA controller. " + actionHelp}, []string{"action", "error"}),
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: subsystem, Name: "reconciliation_duration_seconds",
			Help:    "The time(seconds) that the HPA controller takes to reconcile once. " + actionHelp,
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"action", "error"}),
		computations: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: "metric_computation_total",
			Help: "Number of metric computations. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type"},
			[]string{"action", "error", "metric_type"}),
		computeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: subsystem, Name: "metric_computation_duration_seconds",
			Help:    "The time(seconds) that the HPA controller takes to calculate one metric. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. The label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"action", "error", "metric_type"}),
		count: prometheus.NewGauge(prometheus.GaugeOpts{Subsystem: subsystem, Name: "num_horizontal_pod_autoscalers",
			Help: "Current number of controlled HPA objects."}),
		desiredReplicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: subsystem, Name: "desired_replicas",
			Help: "Current desired replica count for HPA objects."}, []string{"namespace", "hpa_name"}),
		seen: map[types.NamespacedName]bool{},
	}
	var err error
	m.reconciles = register(reg, m.reconciles, &err)
	m.reconcileDuration = register(reg, m.reconcileDuration, &err)
	m.computations = register(reg, m.computations, &err)
	m.computeDuration = register(reg, m.computeDuration, &err)
	m.count = register(reg, m.count, &err)
	m.desiredReplicas = register(reg, m.desiredReplicas, &err)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector.(C)
		}
		if *errp == nil {
			*errp = fmt.Errorf("register metrics: %w", err)
		}
	}
	return c
}

func errorLabel(err error) string {
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, errSpec):
		return "spec"
	}
	return "internal"
}

func (m *metrics) observeReconcile(action string, err error, d time.Duration) {
	m.reconciles.WithLabelValues(action, errorLabel(err)).Inc()
	m.reconcileDuration.WithLabelValues(action, errorLabel(err)).Observe(d.Seconds())
}

func (m *metrics) observeMetric(current, proposal int32, err error, typ autoscalingv2.MetricSourceType, d time.Duration) {
	action := actionNone
	switch {
	case err != nil:
	case proposal > current:
		action = actionScaleUp
	case proposal < current:
		action = actionScaleDown
	}
	m.computations.WithLabelValues(action, errorLabel(err), string(typ)).Inc()
	m.computeDuration.WithLabelValues(action, errorLabel(err), string(typ)).Observe(d.Seconds())
}

// desired records an autoscaler's desired replicas (and counts it).
func (m *metrics) desired(key types.NamespacedName, replicas int32) {
	m.mu.Lock()
	if !m.seen[key] {
		m.seen[key] = true
		m.count.Inc()
	}
	m.mu.Unlock()
	m.desiredReplicas.WithLabelValues(key.Namespace, key.Name).Set(float64(replicas))
}

// forget drops a deleted autoscaler.
func (m *metrics) forget(key types.NamespacedName) {
	m.mu.Lock()
	if m.seen[key] {
		delete(m.seen, key)
		m.count.Dec()
	}
	m.mu.Unlock()
	m.desiredReplicas.DeleteLabelValues(key.Namespace, key.Name)
}
