package nodeipam

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are kube-controller-manager's cidrset metrics, labelled with the
// cluster CIDR (the "cirdset" spelling of the maximum is Kubernetes').
type metrics struct {
	allocations, releases *prometheus.CounterVec
	max, usage            *prometheus.GaugeVec
	tries                 *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const sub = "node_ipam_controller"
	label := []string{"clusterCIDR"}
	m := &metrics{
		allocations: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "cidrset_cidrs_allocations_total",
			Help: "Counter measuring total number of CIDR allocations."}, label),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: "cidrset_cidrs_releases_total",
			Help: "Counter measuring total number of CIDR releases."}, label),
		max: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "cirdset_max_cidrs",
			Help: "Maximum number of CIDRs that can be allocated."}, label),
		usage: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: "cidrset_usage_cidrs",
			Help: "Gauge measuring percentage of allocated CIDRs."}, label),
		tries: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: sub, Name: "cidrset_allocation_tries_per_request",
			Help: "Number of endpoints added on each Service sync", Buckets: prometheus.ExponentialBuckets(1, 5, 5)}, label),
	}
	var err error
	if m.allocations, err = register(reg, m.allocations); err != nil {
		return nil, err
	}
	if m.releases, err = register(reg, m.releases); err != nil {
		return nil, err
	}
	if m.max, err = register(reg, m.max); err != nil {
		return nil, err
	}
	if m.usage, err = register(reg, m.usage); err != nil {
		return nil, err
	}
	if m.tries, err = register(reg, m.tries); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector registered before it
// under the same name.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) (T, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing, nil
			}
		}
		return c, fmt.Errorf("register metrics: %w", err)
	}
	return c, nil
}
