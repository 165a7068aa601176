package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// objectWatches is one node's cache of the ConfigMaps (or Secrets) its
// pods reference, kept as the kubelet's watch-based manager keeps it: one
// list and watch per referenced object (namespace, fieldSelector
// metadata.name=<name>), with the node's own client, so the Node
// authorizer sees exactly the kubelet's requests; started when the first
// pod of the node references the object and stopped when the last one
// that does is gone. Two pods referencing one object share its watch.
type objectWatches[T informer.Object, L runtime.Object] struct {
	client *rest.Client
	gvr    schema.GroupVersionResource
	// what names the cache in the kubelet's sync error ("configmap",
	// "secret").
	what string
	log  *slog.Logger
	// changed is called with the namespace of every change of a watched
	// object (the agent requeues the namespace's blocked pods).
	changed func(ns string)

	mu sync.Mutex
	// run starts a watch under the agent's context; nil before Start.
	run func(func(context.Context)) bool
	// byObj are the live watches; byPod the objects each pod references.
	byObj map[types.NamespacedName]*objectWatch[T]
	byPod map[types.NamespacedName][]types.NamespacedName
}

// objectWatch is the watch of one object.
type objectWatch[T informer.Object] struct {
	inf  *informer.Informer[T]
	stop context.CancelFunc
	refs int
}

func newObjectWatches[T informer.Object, L runtime.Object](c *rest.Client, gvr schema.GroupVersionResource, what string,
	log *slog.Logger, changed func(string)) *objectWatches[T, L] {
	return &objectWatches[T, L]{client: c, gvr: gvr, what: what, log: log, changed: changed,
		byObj: map[types.NamespacedName]*objectWatch[T]{}, byPod: map[types.NamespacedName][]types.NamespacedName{}}
}

// start lets watches run: run launches a function under the agent's
// context and reports false once the agent stops.
func (w *objectWatches[T, L]) start(run func(func(context.Context)) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.run = run
}

// register records that pod references the objects names (in the pod's
// namespace), starting the watches not yet running and stopping those no
// longer referenced by any pod. It returns the objects' informers.
func (w *objectWatches[T, L]) register(pod types.NamespacedName, names []string) []*informer.Informer[T] {
	objs := make([]types.NamespacedName, 0, len(names))
	for _, n := range names {
		o := types.NamespacedName{Namespace: pod.Namespace, Name: n}
		if !slices.Contains(objs, o) {
			objs = append(objs, o)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.byPod[pod]
	infs := make([]*informer.Informer[T], 0, len(objs))
	for _, o := range objs {
		ow := w.byObj[o]
		if ow == nil {
			ow = w.watchLocked(o)
			w.byObj[o] = ow
		}
		if !slices.Contains(old, o) {
			ow.refs++
		}
		infs = append(infs, ow.inf)
	}
	for _, o := range old {
		if !slices.Contains(objs, o) {
			w.unrefLocked(o)
		}
	}
	if len(objs) == 0 {
		delete(w.byPod, pod)
	} else {
		w.byPod[pod] = objs
	}
	return infs
}

// release drops every reference of the pod.
func (w *objectWatches[T, L]) release(pod types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.byPod[pod] {
		w.unrefLocked(o)
	}
	delete(w.byPod, pod)
}

func (w *objectWatches[T, L]) unrefLocked(o types.NamespacedName) {
	ow := w.byObj[o]
	if ow == nil {
		return
	}
	if ow.refs--; ow.refs <= 0 {
		ow.stop()
		delete(w.byObj, o)
	}
}

// watchLocked builds and starts the watch of o.
func (w *objectWatches[T, L]) watchLocked(o types.NamespacedName) *objectWatch[T] {
	sel := "metadata.name=" + o.Name
	res := rest.For[T, L](w.client, w.gvr, true).Namespace(o.Namespace)
	inf := informer.New[T, L](res, informer.Options[T]{
		Resource:   w.gvr.GroupResource(),
		Logger:     w.log,
		Compaction: informer.CompactNone, // one object: nothing to share
		Reflector: reflector.Options{Name: fmt.Sprintf("object-%q/%q", o.Namespace, o.Name),
			Selectors: func(lo *metav1.ListOptions) { lo.FieldSelector = sel }},
	})
	h := depHandler[T]{w.changed}
	if _, err := inf.AddEventHandler(h, informer.HandlerOptions{Name: "nodeagent-object"}); err != nil {
		w.log.Error("watch handler", "object", o, "err", err) // a fresh informer never refuses
	}
	ctx, cancel := context.WithCancel(context.Background())
	ow := &objectWatch[T]{inf: inf, stop: cancel}
	started := w.run != nil && w.run(func(parent context.Context) {
		defer context.AfterFunc(parent, cancel)()
		inf.Run(ctx)
	}) && w.run(func(parent context.Context) {
		defer context.AfterFunc(parent, cancel)()
		// A missing object brings no event: say when the first list is
		// in, so that the pods waiting on it look again.
		if informer.WaitForCacheSync(ctx, inf.HasSynced) {
			w.changed(o.Namespace)
		}
	})
	if !started {
		cancel()
	}
	return ow
}

// get returns the object from its watch, as the kubelet's manager: a
// NotFound error when the synced watch does not hold it, the sync error
// when the watch has not listed it (yet, or it is refused).
func (w *objectWatches[T, L]) get(ns, name string) (T, error) {
	var zero T
	w.mu.Lock()
	ow := w.byObj[types.NamespacedName{Namespace: ns, Name: name}]
	w.mu.Unlock()
	if ow == nil {
		return zero, fmt.Errorf("object %q/%q not registered", ns, name)
	}
	if !ow.inf.HasSynced() {
		return zero, fmt.Errorf("failed to sync %s cache: timed out waiting for the condition", w.what)
	}
	obj, err := ow.inf.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return zero, apierrors.NewNotFound(schema.GroupResource{Resource: w.what}, name)
	}
	return obj, err
}

// watching counts the live watches.
func (w *objectWatches[T, L]) watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byObj)
}
