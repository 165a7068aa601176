package podgc

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-controller-manager's pod GC metrics.
type metrics struct {
	deleted, errors *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "pod_gc_collector", Name: "force_delete_pods_total",
			Help: "Number of pods that are being forcefully deleted since the Pod GC Controller started.",
		}, []string{"namespace", "reason"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "pod_gc_collector", Name: "force_delete_pod_errors_total",
			Help: "Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.",
		}, []string{"namespace", "reason"}),
	}
	for _, c := range []**prometheus.CounterVec{&m.deleted, &m.errors} {
		if err := reg.Register(*c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("register metrics: %w", err)
			}
			*c = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	return m, nil
}
