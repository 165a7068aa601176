package statefulset

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metricsSubsystem is kube-controller-manager's subsystem for these
// metrics, so their names match: statefulset_controller_<name>.
const metricsSubsystem = "statefulset_controller"

// metrics are the StatefulSet controller's own metrics, as
// kube-controller-manager exports them (the workqueue's come from the
// controller runtime).
type metrics struct {
	maxUnavailable      *prometheus.GaugeVec
	unavailableReplicas *prometheus.GaugeVec
	staleSkips          *prometheus.CounterVec
}

var setLabels = []string{"statefulset_namespace", "statefulset_name", "pod_management_policy"}

// newMetrics registers the metrics on reg; metrics already registered
// there (by an earlier controller on the same manager) are reused.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		maxUnavailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: metricsSubsystem,
			Name: "statefulset_max_unavailable",
			Help: "Maximum number of unavailable pods allowed during StatefulSet rolling updates"}, setLabels),
		unavailableReplicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: metricsSubsystem,
			Name: "statefulset_unavailable_replicas",
			Help: "Current number of unavailable pods in StatefulSet"}, setLabels),
		staleSkips: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: metricsSubsystem,
			Name: "stale_sync_skips_total",
			Help: "Total number of StatefulSet syncs skipped due to a stale watch cache."}, []string{"group", "resource"}),
	}
	var err error
	m.maxUnavailable, err = register(reg, m.maxUnavailable)
	if err != nil {
		return nil, err
	}
	m.unavailableReplicas, err = register(reg, m.unavailableReplicas)
	if err != nil {
		return nil, err
	}
	m.staleSkips, err = register(reg, m.staleSkips)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("statefulset: register metrics: %w", err)
	}
	return c, nil
}

// forget drops the series of a deleted set.
func (m *metrics) forget(ns, name string) {
	match := prometheus.Labels{"statefulset_namespace": ns, "statefulset_name": name}
	m.maxUnavailable.DeletePartialMatch(match)
	m.unavailableReplicas.DeletePartialMatch(match)
}
