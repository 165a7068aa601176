package job

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-controller-manager's job_controller_* families.
type metrics struct {
	syncDuration  *prometheus.HistogramVec // completion_mode, result, action
	syncs         *prometheus.CounterVec   // completion_mode, result, action
	finished      *prometheus.CounterVec   // completion_mode, result, reason
	podsFinished  *prometheus.CounterVec   // completion_mode, result
	policyActions *prometheus.CounterVec   // action
	podsCreated   *prometheus.CounterVec   // reason, status
}

// Values of the metrics' action label.
const (
	actionReconciling = "reconciling"
	actionTracking    = "tracking"
	actionPodsCreated = "pods_created"
	actionPodsDeleted = "pods_deleted"
)

// newMetrics creates the families and registers them on reg; a registry
// that already holds them (a second controller in one process) is reused.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const sub = "job_controller"
	m := &metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "job_sync_duration_seconds",
			Help: "The time it took to sync a job", Buckets: prometheus.ExponentialBuckets(0.004, 2, 15)},
			[]string{"completion_mode", "result", "action"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "job_syncs_total",
			Help: "The number of job syncs"}, []string{"completion_mode", "result", "action"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "jobs_finished_total",
			Help: "The number of finished jobs"}, []string{"completion_mode", "result", "reason"}),
		podsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "job_pods_finished_total",
			Help: "The number of finished Pods that are fully tracked"}, []string{"completion_mode", "result"}),
		policyActions: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "pod_failures_handled_by_failure_policy_total",
			Help: "The number of failed Pods handled by failure policy with respect to the failure policy action applied based on the matched rule."},
			[]string{"action"}),
		podsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "job_pods_creation_total",
			Help: "The number of Pods created by the Job controller labelled with a reason for the Pod creation."},
			[]string{"reason", "status"}),
	}
	var err error
	for _, f := range []func() error{
		func() error { m.syncDuration, err = register(reg, m.syncDuration); return err },
		func() error { m.syncs, err = register(reg, m.syncs); return err },
		func() error { m.finished, err = register(reg, m.finished); return err },
		func() error { m.podsFinished, err = register(reg, m.podsFinished); return err },
		func() error { m.policyActions, err = register(reg, m.policyActions); return err },
		func() error { m.podsCreated, err = register(reg, m.podsCreated); return err },
	} {
		if err := f(); err != nil {
			return nil, fmt.Errorf("job: register metrics: %w", err)
		}
	}
	return m, nil
}

// register registers c on reg, or returns the collector already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
