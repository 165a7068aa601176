package manager

import (
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// DefaultSyncPeriod is Options.SyncPeriod's default, controller-runtime's:
// every cached object is reconciled again at least this often (within the
// jitter), whether or not an event announced a change.
const DefaultSyncPeriod = 10 * time.Hour

// DefaultQPS and DefaultBurst are the client limits of a manager whose
// Options and Config set none: controller-runtime's 20 and 30 (client-go's
// plain default, rest.DefaultQPS, is 5 and 10).
const (
	DefaultQPS   float32 = 20
	DefaultBurst         = 30
)

// JitterTenPercent returns d times a random factor in [0.9, 1.1), as
// controller-runtime spreads the resync periods of its informers so that
// they do not all replay their caches at once.
func JitterTenPercent(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + rand.Float64()/5))
}

// resyncPeriodFor gives the factory each new informer's default handler
// resync period: SyncPeriodByResource's when the resource has one, else
// SyncPeriodJitter(SyncPeriod); never for negative periods.
func (o *Options) resyncPeriodFor() func(schema.GroupVersionResource) time.Duration {
	period, jitter := o.SyncPeriod, o.SyncPeriodJitter
	byResource := make(map[schema.GroupResource]time.Duration, len(o.SyncPeriodByResource))
	for gr, d := range o.SyncPeriodByResource {
		byResource[gr] = d
	}
	return func(gvr schema.GroupVersionResource) time.Duration {
		if d, ok := byResource[gvr.GroupResource()]; ok {
			return max(d, 0)
		}
		if period <= 0 {
			return 0
		}
		return jitter(period)
	}
}

// setSyncDefaults fills SyncPeriod and SyncPeriodJitter.
func (o *Options) setSyncDefaults() {
	if o.SyncPeriod == 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.SyncPeriodJitter == nil {
		o.SyncPeriodJitter = JitterTenPercent
	}
}

// throttled returns a copy of cfg with the manager's client limits
// (Options.QPS and Burst, else cfg's, else DefaultQPS and DefaultBurst)
// and its rest client metrics.
func (o *Options) throttled(cfg *rest.Config, met *rest.Metrics) *rest.Config {
	cp := *cfg
	switch {
	case o.QPS != 0:
		cp.QPS = o.QPS
	case cp.QPS == 0:
		cp.QPS = DefaultQPS
	}
	switch {
	case o.Burst != 0:
		cp.Burst = o.Burst
	case cp.Burst == 0:
		cp.Burst = DefaultBurst
	}
	cp.Metrics = met
	return &cp
}
