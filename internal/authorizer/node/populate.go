package node

import (
	"context"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Event is a change of one object.
type Event struct {
	Type   watch.EventType
	Object runtime.Object
}

// Source lists the current objects of a resource and streams the changes
// after them; the channel closes when the stream ends (Run then lists
// again).
type Source func(ctx context.Context, gvr schema.GroupVersionResource) ([]runtime.Object, <-chan Event, error)

// feed is how the graph takes one resource's objects.
type feed struct {
	gvr schema.GroupVersionResource
	set func(g *Graph, obj runtime.Object)
	del func(g *Graph, namespace, name string)
}

// Resources the graph is built from.
var feeds = []feed{
	{corev1.SchemeGroupVersion.WithResource("pods"),
		func(g *Graph, o runtime.Object) {
			if p, ok := o.(*corev1.Pod); ok {
				g.SetPod(p)
			}
		},
		func(g *Graph, ns, name string) { g.DeletePod(ns, name) }},
	{corev1.SchemeGroupVersion.WithResource("persistentvolumes"),
		func(g *Graph, o runtime.Object) {
			if pv, ok := o.(*corev1.PersistentVolume); ok {
				g.SetPV(pv)
			}
		},
		func(g *Graph, _, name string) { g.DeletePV(name) }},
	{storagev1.SchemeGroupVersion.WithResource("volumeattachments"),
		func(g *Graph, o runtime.Object) {
			if va, ok := o.(*storagev1.VolumeAttachment); ok {
				g.SetVolumeAttachment(va)
			}
		},
		func(g *Graph, _, name string) { g.DeleteVolumeAttachment(name) }},
	{resourcev1.SchemeGroupVersion.WithResource("resourceslices"),
		func(g *Graph, o runtime.Object) {
			if s, ok := o.(*resourcev1.ResourceSlice); ok {
				node := ""
				if s.Spec.NodeName != nil {
					node = *s.Spec.NodeName
				}
				g.SetNodeObject("resourceslices", "", s.Name, node)
			}
		},
		func(g *Graph, _, name string) { g.SetNodeObject("resourceslices", "", name, "") }},
	{certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"),
		func(g *Graph, o runtime.Object) {
			if r, ok := o.(*certificatesv1.PodCertificateRequest); ok {
				g.SetNodeObject("podcertificaterequests", r.Namespace, r.Name, string(r.Spec.NodeName))
			}
		},
		func(g *Graph, ns, name string) { g.SetNodeObject("podcertificaterequests", ns, name, "") }},
}

// relistDelay spaces the relists of a resource whose stream failed.
const relistDelay = time.Second

// Run keeps g current with src until ctx ends: for each resource it lists,
// replaces what g held of it by the list, applies the changes, and lists
// again when the stream ends. Resources src does not serve are skipped
// after one failed attempt per relistDelay.
func (g *Graph) Run(ctx context.Context, src Source, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	done := make(chan struct{}, len(feeds))
	for _, f := range feeds {
		go func() {
			defer func() { done <- struct{}{} }()
			g.runFeed(ctx, src, f, log)
		}()
	}
	for range feeds {
		<-done
	}
}

func (g *Graph) runFeed(ctx context.Context, src Source, f feed, log *slog.Logger) {
	known := map[types.NamespacedName]struct{}{}
	for ctx.Err() == nil {
		objs, events, err := src(ctx, f.gvr)
		if err != nil {
			if ctx.Err() == nil {
				log.Debug("node authorizer graph: list", "resource", f.gvr.String(), "err", err)
			}
		} else {
			known = g.replace(f, objs, known)
			for ev := range events {
				key := keyOf(ev.Object)
				if ev.Type == watch.Deleted {
					f.del(g, key.Namespace, key.Name)
					delete(known, key)
					continue
				}
				f.set(g, ev.Object)
				known[key] = struct{}{}
			}
		}
		t := time.NewTimer(relistDelay)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// replace sets the listed objects and deletes those known before but no
// longer listed; it returns the keys now known.
func (g *Graph) replace(f feed, objs []runtime.Object, known map[types.NamespacedName]struct{}) map[types.NamespacedName]struct{} {
	now := make(map[types.NamespacedName]struct{}, len(objs))
	for _, o := range objs {
		f.set(g, o)
		now[keyOf(o)] = struct{}{}
	}
	for k := range known {
		if _, ok := now[k]; !ok {
			f.del(g, k.Namespace, k.Name)
		}
	}
	return now
}

func keyOf(o runtime.Object) types.NamespacedName {
	m, err := meta.Accessor(o)
	if err != nil {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
}
