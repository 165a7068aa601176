package garbagecollector

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	inf    *informer.Informer[*unstructured.Unstructured]
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

// startMonitor runs an informer of r that feeds the graph builder with
// metadata-only objects.
func (gc *GarbageCollector) startMonitor(ctx context.Context, r apiResource) (*monitor, error) {
	res := rest.Dynamic(gc.client, r.gvr, r.namespaced)
	inf := informer.New[*unstructured.Unstructured, *unstructured.UnstructuredList](res, informer.Options[*unstructured.Unstructured]{
		Transform: metadataOnly,
		Resource:  r.gvr.GroupResource(),
		Logger:    gc.log,
		Reflector: reflector.Options{Name: "garbagecollector " + r.gvr.GroupResource().String()},
	})
	gvk := r.gvk
	if r.gvr.GroupResource() == crdResource {
		// A CRD that comes, is established or goes changes what there is
		// to watch: rediscover now rather than at the next period.
		kick := func() { gc.kickResync() }
		if _, err := inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
			AddFunc:    func(*unstructured.Unstructured, bool) { kick() },
			UpdateFunc: func(*unstructured.Unstructured, *unstructured.Unstructured) { kick() },
			DeleteFunc: func(*unstructured.Unstructured, bool) { kick() },
		}, informer.HandlerOptions{Name: "garbagecollector-crds"}); err != nil {
			return nil, err
		}
	}
	reg, err := inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(u *unstructured.Unstructured, _ bool) {
			gc.changes.push(event{typ: addEvent, obj: metaOf(u, gvk)})
		},
		UpdateFunc: func(old, cur *unstructured.Unstructured) {
			if old.GetResourceVersion() == cur.GetResourceVersion() {
				return // a relist without change
			}
			o := metaOf(old, gvk)
			gc.changes.push(event{typ: updateEvent, obj: metaOf(cur, gvk), old: &o})
		},
		DeleteFunc: func(u *unstructured.Unstructured, _ bool) {
			gc.changes.push(event{typ: deleteEvent, obj: metaOf(u, gvk)})
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

// metadataOnly keeps what the graph needs of an object, so that the
// informer caches hold metadata only.
func metadataOnly(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	md := map[string]any{}
	if m, ok := u.Object["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "ownerReferences", "finalizers", "deletionTimestamp"} {
			if v, ok := m[k]; ok {
				md[k] = v
			}
		}
	}
	out := map[string]any{"metadata": md}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// metaOf extracts the graph's view of an object of kind gvk.
func metaOf(u *unstructured.Unstructured, gvk schema.GroupVersionKind) objMeta {
	return objMeta{
		id: identity{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: u.GetName(),
			UID: u.GetUID(), Namespace: u.GetNamespace()},
		owners:     u.GetOwnerReferences(),
		finalizers: u.GetFinalizers(),
		deleting:   u.GetDeletionTimestamp() != nil,
	}
}
