package flowcontrol

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/clock"
)

// defaultNominalShares is a Limited level's share when it names none.
const defaultNominalShares = 30

// Options configure a Controller.
type Options struct {
	// ServerConcurrencyLimit is the seats of the whole server, shared by
	// the priority levels in proportion to their nominal shares
	// (kube-apiserver: --max-requests-inflight +
	// --max-mutating-requests-inflight).
	ServerConcurrencyLimit int
	// Mandatory are the exempt and catch-all objects, used in place of
	// stored ones while those are missing (kube-apiserver's fixed
	// configuration).
	MandatoryFlowSchemas    []*flowcontrolv1.FlowSchema
	MandatoryPriorityLevels []*flowcontrolv1.PriorityLevelConfiguration
	Clock                   clock.PassiveClock
	Metrics                 *Metrics
}

// Controller classifies requests and admits them through the queue sets
// of their priority levels. Its configuration is replaced as a whole by
// Update, at any time; requests already waiting stay in their queue
// sets.
type Controller struct {
	opts  Options
	retry *retryAfter
	mu    sync.Mutex // serializes Update
	cur   atomic.Pointer[config]
}

// config is one digested configuration: read-only once published.
type config struct {
	schemas []*flowcontrolv1.FlowSchema // by precedence, then name
	levels  map[string]*level
}

// level is a priority level of one configuration with its queue set; the
// queue set carries over to the next configuration as long as the level
// exists.
type level struct {
	pl     *flowcontrolv1.PriorityLevelConfiguration
	qs     *queueSet
	limits limits
}

// limits are a level's seats: the nominal share, what it may lend and
// borrow, and the limit in force.
type limits struct {
	nominal, lower, upper, current int
}

// New returns a controller holding the mandatory configuration only.
func New(opts Options) *Controller {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	c := &Controller{opts: opts, retry: newRetryAfter(opts.Clock.Now)}
	c.Update(nil, nil)
	return c
}

// Update replaces the configuration with these objects (plus the
// mandatory ones missing among them).
func (c *Controller) Update(fss []*flowcontrolv1.FlowSchema, pls []*flowcontrolv1.PriorityLevelConfiguration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fss = withMandatory(fss, c.opts.MandatoryFlowSchemas, func(f *flowcontrolv1.FlowSchema) string { return f.Name })
	pls = withMandatory(pls, c.opts.MandatoryPriorityLevels, func(p *flowcontrolv1.PriorityLevelConfiguration) string { return p.Name })
	var old map[string]*level
	if prev := c.cur.Load(); prev != nil {
		old = prev.levels
	}
	next := &config{levels: map[string]*level{}}
	sum := 0
	for _, pl := range pls {
		sum += nominalShares(pl)
	}
	for _, pl := range pls {
		// A new level value each time (requests read the published one
		// without locks); the queue set carries over.
		lv := &level{pl: pl, limits: levelLimits(pl, c.opts.ServerConcurrencyLimit, sum)}
		if prev := old[pl.Name]; prev != nil {
			lv.qs = prev.qs
		} else {
			lv.qs = newQueueSet(pl.Name, c.opts.Clock, c.opts.Metrics)
		}
		lv.qs.configure(queueConfigOf(pl, lv.limits.current))
		c.opts.Metrics.setLimits(pl.Name, lv.limits)
		next.levels[pl.Name] = lv
	}
	for name := range old {
		if next.levels[name] == nil {
			c.opts.Metrics.forgetLevel(name)
		}
	}
	for _, fs := range fss {
		if next.levels[fs.Spec.PriorityLevelConfiguration.Name] != nil {
			next.schemas = append(next.schemas, fs)
		}
	}
	slices.SortFunc(next.schemas, func(a, b *flowcontrolv1.FlowSchema) int {
		return cmp.Or(cmp.Compare(a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence), cmp.Compare(a.Name, b.Name))
	})
	c.cur.Store(next)
}

func withMandatory[T any](have, mandatory []T, name func(T) string) []T {
	out := slices.Clone(have)
	for _, m := range mandatory {
		if !slices.ContainsFunc(have, func(h T) bool { return name(h) == name(m) }) {
			out = append(out, m)
		}
	}
	return out
}

func nominalShares(pl *flowcontrolv1.PriorityLevelConfiguration) int {
	switch {
	case pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt:
		if pl.Spec.Exempt != nil && pl.Spec.Exempt.NominalConcurrencyShares != nil {
			return int(*pl.Spec.Exempt.NominalConcurrencyShares)
		}
		return 0
	case pl.Spec.Limited != nil && pl.Spec.Limited.NominalConcurrencyShares != nil:
		return int(*pl.Spec.Limited.NominalConcurrencyShares)
	}
	return defaultNominalShares
}

// levelLimits computes a level's seats from the server's: nominal =
// ceil(server * shares / all shares); lower = nominal - lendable; upper =
// nominal + borrowing limit (the whole server when unlimited).
func levelLimits(pl *flowcontrolv1.PriorityLevelConfiguration, server, sumShares int) limits {
	var l limits
	if sumShares > 0 {
		l.nominal = int(math.Ceil(float64(server) * float64(nominalShares(pl)) / float64(sumShares)))
	}
	var lendable, borrowing *int32
	if pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt && pl.Spec.Exempt != nil {
		lendable = pl.Spec.Exempt.LendablePercent
	} else if pl.Spec.Limited != nil {
		lendable, borrowing = pl.Spec.Limited.LendablePercent, pl.Spec.Limited.BorrowingLimitPercent
	}
	l.lower = l.nominal
	if lendable != nil {
		l.lower -= int(math.Round(float64(l.nominal) * float64(*lendable) / 100))
	}
	l.upper = l.nominal + server
	if borrowing != nil {
		l.upper = l.nominal + int(math.Round(float64(l.nominal)*float64(*borrowing)/100))
	}
	l.current = l.nominal
	return l
}

func queueConfigOf(pl *flowcontrolv1.PriorityLevelConfiguration, limit int) queueConfig {
	if pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt {
		return queueConfig{exempt: true, limit: limit}
	}
	qc := queueConfig{limit: limit}
	if lim := pl.Spec.Limited; lim != nil && lim.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue && lim.LimitResponse.Queuing != nil {
		q := lim.LimitResponse.Queuing
		qc.queues, qc.handSize, qc.queueLengthLimit = int(q.Queues), int(q.HandSize), int(q.QueueLengthLimit)
	}
	return qc
}

// Classification is where a request was sorted: its FlowSchema, its
// priority level and its flow.
type Classification struct {
	FlowSchema, FlowSchemaUID       string
	PriorityLevel, PriorityLevelUID string
	Distinguisher                   string
	Exempt                          bool
}

// Classify finds the first FlowSchema (by matching precedence, then
// name) that matches the request, and its priority level. The catch-all
// schema matches every authenticated or unauthenticated request, so
// every request finds one while the mandatory objects exist.
func (c *Controller) Classify(r *Request) (Classification, bool) {
	cl, _, ok := c.classify(r)
	return cl, ok
}

func (c *Controller) classify(r *Request) (Classification, *level, bool) {
	cfg := c.cur.Load()
	for _, fs := range cfg.schemas {
		if !matchesFlowSchema(fs, r) {
			continue
		}
		lv := cfg.levels[fs.Spec.PriorityLevelConfiguration.Name]
		return Classification{
			FlowSchema: fs.Name, FlowSchemaUID: string(fs.UID),
			PriorityLevel: lv.pl.Name, PriorityLevelUID: string(lv.pl.UID),
			Distinguisher: flowDistinguisher(fs, r),
			Exempt:        lv.pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt,
		}, lv, true
	}
	return Classification{}, nil, false
}

// Limits returns a level's nominal and current seats, for tests and
// diagnostics; ok is false for an unknown level.
func (c *Controller) Limits(pl string) (nominal, current int, ok bool) {
	lv := c.cur.Load().levels[pl]
	if lv == nil {
		return 0, 0, false
	}
	return lv.limits.nominal, lv.limits.current, true
}
