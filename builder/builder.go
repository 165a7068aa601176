package builder

import (
	"errors"
	"fmt"
	"strings"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Builder assembles a controller. Its methods record and return the
// builder; errors surface at Complete (or Build).
type Builder struct {
	mgr     *manager.Manager
	name    string
	forSrc  Source
	forPred []predicate.Predicate
	owns    []watchInput
	watches []watchInput
	filters []predicate.Predicate
	opts    controller.Options
	setOpts bool
	errs    []error
}

type watchInput struct {
	src   Source
	watch Watch
	preds []predicate.Predicate
}

// ControllerManagedBy starts a builder for a controller that m runs.
func ControllerManagedBy(m *manager.Manager) *Builder { return &Builder{mgr: m} }

// Named sets the controller's name (default: the lower-case resource of
// For, e.g. "configmaps"). Names label logs and metrics and must be
// unique within a manager.
func (b *Builder) Named(name string) *Builder {
	b.name = name
	return b
}

// For sets the kind the controller reconciles: each event of it enqueues
// the object's own key. Call it exactly once.
func (b *Builder) For(src Source, preds ...predicate.Predicate) *Builder {
	if b.forSrc != nil {
		b.errs = append(b.errs, errors.New("For called twice"))
	}
	b.forSrc, b.forPred = src, preds
	return b
}

// Owns adds a kind the controller creates: each event of an object of it
// enqueues its controller owner (ownerReference with controller=true)
// when that owner is of the For kind.
func (b *Builder) Owns(src Source, preds ...predicate.Predicate) *Builder {
	b.owns = append(b.owns, watchInput{src: src, preds: preds})
	return b
}

// Watches adds a kind with a mapping of your own, made with
// Kind[T]().Map(fn).
func (b *Builder) Watches(w Watch, preds ...predicate.Predicate) *Builder {
	b.watches = append(b.watches, watchInput{watch: w, preds: preds})
	return b
}

// WithEventFilter adds a predicate to every watch of the controller.
func (b *Builder) WithEventFilter(p predicate.Predicate) *Builder {
	b.filters = append(b.filters, p)
	return b
}

// WithOptions sets the controller's options; unset fields are taken from
// the manager (metrics, clock, logger, cache-sync timeout).
func (b *Builder) WithOptions(o controller.Options) *Builder {
	b.opts, b.setOpts = o, true
	return b
}

// Complete builds the controller and adds it to the manager.
func (b *Builder) Complete(r reconcile.Reconciler) error {
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	return b.mgr.Add(c)
}

// Build builds the controller without adding it to the manager.
func (b *Builder) Build(r reconcile.Reconciler) (*controller.Controller, error) {
	if b.forSrc == nil {
		b.errs = append(b.errs, errors.New("For is required"))
	}
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("builder: %w", errors.Join(b.errs...))
	}
	forRes, err := b.forSrc.resolve(b.mgr)
	if err != nil {
		return nil, fmt.Errorf("builder: For: %w", err)
	}
	fm := forRes.mapping()
	name := b.name
	if name == "" {
		name = strings.ToLower(fm.GVR.Resource)
	}
	c, err := controller.New(name, r, b.errorPolicy(name, fm.GVK, b.options()))
	if err != nil {
		return nil, fmt.Errorf("builder: %w", err)
	}
	srcs := []controller.Source{forRes.self(b.preds(b.forPred))}
	for _, o := range b.owns {
		res, err := o.src.resolve(b.mgr)
		if err != nil {
			return nil, fmt.Errorf("builder %s: Owns: %w", name, err)
		}
		if fm.GVK.Kind == "" {
			return nil, fmt.Errorf("builder %s: Owns needs the For kind; For(KindAt[...]) over a resource has none, use Watches", name)
		}
		srcs = append(srcs, res.owner(fm.GVK.GroupKind(), fm.Namespaced, b.preds(o.preds)))
	}
	for _, w := range b.watches {
		src, err := w.watch.build(b.mgr, b.preds(w.preds))
		if err != nil {
			return nil, fmt.Errorf("builder %s: Watches: %w", name, err)
		}
		srcs = append(srcs, src)
	}
	for _, s := range srcs {
		if err := c.Watch(s); err != nil {
			return nil, fmt.Errorf("builder: %w", err)
		}
	}
	return c, nil
}

func (b *Builder) preds(own []predicate.Predicate) []predicate.Predicate {
	return append(append([]predicate.Predicate(nil), b.filters...), own...)
}

func (b *Builder) options() controller.Options {
	def := b.mgr.ControllerOptions()
	if !b.setOpts {
		return def
	}
	o := b.opts
	if o.CacheSyncTimeout == 0 {
		o.CacheSyncTimeout = def.CacheSyncTimeout
	}
	if o.Clock == nil {
		o.Clock = def.Clock
	}
	if o.Logger == nil {
		o.Logger = def.Logger
	}
	if o.Metrics == nil {
		o.Metrics = def.Metrics
	}
	if o.QueueMetrics == nil {
		o.QueueMetrics = def.QueueMetrics
	}
	if o.NotRetried == nil {
		o.NotRetried = def.NotRetried
	}
	return o
}
