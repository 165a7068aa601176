package garbagecollector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// crdResource is CustomResourceDefinitions: their changes trigger a
// rediscovery.
var crdResource = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// monitor is the informer of one watched resource.
type monitor struct {
	res    apiResource
	inf    *informer.Informer[*metav1.PartialObjectMetadata]
	reg    *informer.Registration
	cancel context.CancelFunc
	done   chan struct{} // closed when the informer's Run returned
}

// watchable reports whether the collector watches r.
func (gc *GarbageCollector) watchable(r apiResource) bool {
	return r.preferred && r.supports("list", "watch", "delete") && !gc.ignored[r.gvr.GroupResource()]
}

// syncMonitors starts an informer for every watchable resource not yet
// watched (or watched in another version). When complete (discovery had no
// errors) it also stops the informers of resources no longer served.
func (gc *GarbageCollector) syncMonitors(ctx context.Context, resources []apiResource, complete bool) {
	want := map[schema.GroupResource]apiResource{}
	for _, r := range resources {
		if gc.watchable(r) {
			want[r.gvr.GroupResource()] = r
		}
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	for gr, m := range gc.monitors {
		if r, ok := want[gr]; (!ok && complete) || (ok && r.gvr != m.res.gvr) {
			m.cancel()
			<-m.done
			delete(gc.monitors, gr)
			gc.log.Info("garbage collector stopped watching", "resource", m.res.gvr.String())
		}
	}
	for gr, r := range want {
		if _, ok := gc.monitors[gr]; ok {
			continue
		}
		m, err := gc.startMonitor(ctx, r)
		if err != nil {
			gc.log.Error("garbage collector cannot watch", "resource", r.gvr.String(), "err", err)
			continue
		}
		gc.monitors[gr] = m
	}
}

// startMonitor runs an informer of r that feeds the graph builder. It
// lists and watches metadata only (PartialObjectMetadata, in protobuf),
// as kube-controller-manager's garbage collector does: the collector
// reads nothing else, and metadata decodes at a fraction of the cost of
// whole objects.
func (gc *GarbageCollector) startMonitor(ctx context.Context, r apiResource) (*monitor, error) {
	res := rest.For[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](gc.client, r.gvr, r.namespaced).MetadataOnly()
	inf := informer.New[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](res, informer.Options[*metav1.PartialObjectMetadata]{
		Transform: graphMetadata,
		Resource:  r.gvr.GroupResource(),
		Logger:    gc.log,
		Reflector: reflector.Options{Name: "garbagecollector " + r.gvr.GroupResource().String()},
	})
	gvk := r.gvk
	if r.gvr.GroupResource() == crdResource {
		// A CRD that comes, is established or goes changes what there is
		// to watch: rediscover now rather than at the next period.
		kick := func() { gc.kickResync() }
		if _, err := inf.AddEventHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
			AddFunc:    func(*metav1.PartialObjectMetadata, bool) { kick() },
			UpdateFunc: func(*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadata) { kick() },
			DeleteFunc: func(*metav1.PartialObjectMetadata, bool) { kick() },
		}, informer.HandlerOptions{Name: "garbagecollector-crds"}); err != nil {
			return nil, err
		}
	}
	reg, err := inf.AddEventHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
		AddFunc: func(p *metav1.PartialObjectMetadata, _ bool) {
			gc.changes.push(event{typ: addEvent, obj: metaOf(p, gvk)})
		},
		UpdateFunc: func(old, cur *metav1.PartialObjectMetadata) {
			if old.ResourceVersion == cur.ResourceVersion {
				return // a relist without change
			}
			o := metaOf(old, gvk)
			gc.changes.push(event{typ: updateEvent, obj: metaOf(cur, gvk), old: &o})
		},
		DeleteFunc: func(p *metav1.PartialObjectMetadata, _ bool) {
			gc.changes.push(event{typ: deleteEvent, obj: metaOf(p, gvk)})
		},
	}, informer.HandlerOptions{Name: "garbagecollector"})
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	m := &monitor{res: r, inf: inf, reg: reg, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		inf.Run(mctx)
	}()
	return m, nil
}

// stopMonitors stops every informer and waits for them.
func (gc *GarbageCollector) stopMonitors() {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	for gr, m := range gc.monitors {
		m.cancel()
		<-m.done
		delete(gc.monitors, gr)
	}
}

func (gc *GarbageCollector) synced() bool {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	for _, m := range gc.monitors {
		if !m.reg.HasSynced() {
			return false
		}
	}
	return true
}

func (gc *GarbageCollector) monitorCount() int {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	return len(gc.monitors)
}

// graphMetadata keeps what the graph needs of an object's metadata, so
// that the informer caches hold no labels, annotations nor managed fields.
func graphMetadata(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	return &metav1.PartialObjectMetadata{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			OwnerReferences: p.OwnerReferences, Finalizers: p.Finalizers, DeletionTimestamp: p.DeletionTimestamp,
		},
	}, nil
}

// metaOf extracts the graph's view of an object of kind gvk.
func metaOf(p *metav1.PartialObjectMetadata, gvk schema.GroupVersionKind) objMeta {
	return objMeta{
		id: identity{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: p.Name,
			UID: p.UID, Namespace: p.Namespace},
		owners:     p.OwnerReferences,
		finalizers: p.Finalizers,
		deleting:   p.DeletionTimestamp != nil,
	}
}
