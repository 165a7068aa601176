package cronjob

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-controller-manager's CronJob metrics.
type metrics struct {
	// creationSkew is cronjob_controller_job_creation_skew_duration_seconds:
	// from a start's schedule time to the creation of its Job.
	creationSkew prometheus.Histogram
}

// newMetrics registers the metrics on reg; a second controller on the same
// registry shares the first one's collector.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "cronjob_controller",
		Name:      "job_creation_skew_duration_seconds",
		Help:      "Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
		Buckets:   prometheus.ExponentialBuckets(1, 2, 10),
	})
	if err := reg.Register(h); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
		h = are.ExistingCollector.(prometheus.Histogram)
	}
	return &metrics{creationSkew: h}, nil
}
