package informer

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// FactoryOptions are the defaults of every informer a Factory builds.
type FactoryOptions struct {
	// Namespace limits namespaced informers to one namespace; "" means
	// all. Ignored for cluster-scoped resources.
	Namespace string
	// LabelSelector and FieldSelector filter every list and watch.
	LabelSelector, FieldSelector string
	// ResyncPeriod is the informers' default handler resync period.
	ResyncPeriod time.Duration
	// ResyncPeriodFor, when set, replaces ResyncPeriod: it is called once
	// for each new informer with its resource and returns that informer's
	// default handler resync period (>= 0; 0 means never), so that
	// informers can be given different, e.g. jittered, periods.
	ResyncPeriodFor func(gvr schema.GroupVersionResource) time.Duration
	// Transform is applied to every object before caching; nil means
	// StripManagedFields. It receives and must return the informer's own
	// object type; NoTransform[metav1.Object] keeps objects as sent.
	Transform func(metav1.Object) (metav1.Object, error)
	// Compaction is every informer's Options.Compaction (default
	// CompactShare).
	Compaction Compaction
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock drives resync; default clock.RealClock{}.
	Clock clock.WithTicker
	// Metrics, when set, is shared by every informer (an addition to the
	// original contract).
	Metrics *Metrics
}

// Option narrows one informer of a factory (an addition to the original
// contract: For and Dynamic take them variadically). The options are part
// of the informer's identity: different options, different informer.
type Option func(*informerKey)

// InNamespace overrides FactoryOptions.Namespace for one informer.
func InNamespace(ns string) Option { return func(k *informerKey) { k.namespace = ns } }

// WithLabelSelector overrides FactoryOptions.LabelSelector for one
// informer.
func WithLabelSelector(s string) Option { return func(k *informerKey) { k.labelSelector = s } }

// WithFieldSelector overrides FactoryOptions.FieldSelector for one
// informer.
func WithFieldSelector(s string) Option { return func(k *informerKey) { k.fieldSelector = s } }

// informerKey identifies one informer of a factory.
type informerKey struct {
	typ                          reflect.Type
	gvr                          schema.GroupVersionResource
	namespace                    string
	labelSelector, fieldSelector string
	// untyped marks the informers ForType builds (cached as Object).
	untyped bool
}

// managed is a factory informer, whatever its object type.
type managed interface {
	Run(ctx context.Context)
	HasSynced() bool
}

// Factory builds and shares informers: one per (Go object type, resource,
// namespace, label selector, field selector). It is safe for concurrent
// use.
type Factory struct {
	client *rest.Client
	opts   FactoryOptions

	mu sync.Mutex
	// informers holds every informer built; started those Start launched.
	// Guarded by mu.
	informers map[informerKey]managed
	started   map[informerKey]bool
	// shuttingDown is set by Shutdown; Start then launches nothing, so no
	// goroutine joins wg after Shutdown's Wait began. Guarded by mu.
	shuttingDown bool
	wg           sync.WaitGroup
}

// NewFactory returns a factory of informers over c.
func NewFactory(c *rest.Client, opts FactoryOptions) *Factory {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Factory{client: c, opts: opts, informers: map[informerKey]managed{}, started: map[informerKey]bool{}}
}

// For returns the factory's informer of gvr with object type T and list
// type L (e.g. *corev1.Pod, *corev1.PodList); the same arguments return
// the same informer. namespaced says whether the resource lives in
// namespaces. A new informer does not run until the next Start.
func For[T Object, L runtime.Object](f *Factory, gvr schema.GroupVersionResource, namespaced bool, opts ...Option) *Informer[T] {
	key := f.key(reflect.TypeFor[T](), gvr, namespaced, opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.informers[key]; ok {
		return m.(*Informer[T])
	}
	res := rest.For[T, L](f.client, gvr, namespaced).PreferProtobuf().Namespace(key.namespace)
	inf := New[T, L](res, informerOptions[T](f.opts, key))
	f.informers[key] = inf
	return inf
}

// Dynamic returns the factory's informer of gvr over
// *unstructured.Unstructured objects, for any resource, custom ones
// included.
func Dynamic(f *Factory, gvr schema.GroupVersionResource, namespaced bool, opts ...Option) *Informer[*unstructured.Unstructured] {
	key := f.key(reflect.TypeFor[*unstructured.Unstructured](), gvr, namespaced, opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.informers[key]; ok {
		return m.(*Informer[*unstructured.Unstructured])
	}
	res := rest.Dynamic(f.client, gvr, namespaced).Namespace(key.namespace)
	inf := New[*unstructured.Unstructured, *unstructured.UnstructuredList](res, informerOptions[*unstructured.Unstructured](f.opts, key))
	f.informers[key] = inf
	return inf
}

func (f *Factory) key(typ reflect.Type, gvr schema.GroupVersionResource, namespaced bool, opts []Option) informerKey {
	k := informerKey{typ: typ, gvr: gvr, namespace: f.opts.Namespace,
		labelSelector: f.opts.LabelSelector, fieldSelector: f.opts.FieldSelector}
	for _, o := range opts {
		o(&k)
	}
	if !namespaced {
		k.namespace = ""
	}
	return k
}

// informerOptions derives one informer's options from the factory's.
func informerOptions[T Object](fo FactoryOptions, key informerKey) Options[T] {
	gr := key.gvr.GroupResource()
	name := gr.String()
	if key.namespace != "" {
		name = key.namespace + "/" + name
	}
	resync := fo.ResyncPeriod
	if fo.ResyncPeriodFor != nil {
		resync = max(fo.ResyncPeriodFor(key.gvr), 0)
	}
	o := Options[T]{
		ResyncPeriod: resync,
		Clock:        fo.Clock,
		Logger:       fo.Logger,
		Metrics:      fo.Metrics,
		Resource:     gr,
		Compaction:   fo.Compaction,
		Reflector: reflector.Options{
			Name:   name,
			Logger: fo.Logger,
			Selectors: func(lo *metav1.ListOptions) {
				lo.LabelSelector = key.labelSelector
				lo.FieldSelector = key.fieldSelector
			},
		},
	}
	if fo.Transform != nil {
		o.Transform = adaptTransform[T](fo.Transform)
	}
	return o
}

// adaptTransform turns the factory's untyped transform into a typed one.
func adaptTransform[T Object](fn func(metav1.Object) (metav1.Object, error)) func(T) (T, error) {
	return func(obj T) (T, error) {
		out, err := fn(obj)
		if err != nil {
			return obj, err
		}
		t, ok := out.(T)
		if !ok {
			return obj, fmt.Errorf("transform returned %T, want %T", out, obj)
		}
		return t, nil
	}
}

// Start runs, each in its own goroutine under ctx, every informer not yet
// started. Informers requested later need another Start. After Shutdown it
// does nothing.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for key, inf := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		f.wg.Go(func() { inf.Run(ctx) })
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx
// ends. It reports, per resource, whether all its started informers
// synced.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	started := map[informerKey]managed{}
	for key, inf := range f.informers {
		if f.started[key] {
			started[key] = inf
		}
	}
	f.mu.Unlock()

	res := map[schema.GroupVersionResource]bool{}
	for key, inf := range started {
		synced := WaitForCacheSync(ctx, inf.HasSynced)
		if prev, seen := res[key.gvr]; !seen || prev {
			res[key.gvr] = synced
		}
	}
	return res
}

// Shutdown waits until every started informer has returned; cancel the
// context passed to Start first. Later Starts do nothing.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.wg.Wait()
}
