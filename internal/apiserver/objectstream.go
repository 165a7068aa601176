package apiserver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// ObjectEvent is a change of one object seen by ObjectStream.
type ObjectEvent struct {
	Type   watch.EventType
	Object runtime.Object
}

// ObjectStream is a list and watch inside the process, for in-process
// consumers that keep their own view of a resource (the Node
// authorizer's graph): the current objects of gvr from its watch cache,
// then every change after them on the channel, which is closed when ctx
// ends, the server stops or the cache drops the watcher (the consumer
// then lists again). The objects are shared with the cache: never modify
// them.
func (s *Server) ObjectStream(ctx context.Context, gvr schema.GroupVersionResource) ([]runtime.Object, <-chan ObjectEvent, error) {
	e := s.entry(gvr)
	if e == nil || e.cache == nil {
		return nil, nil, fmt.Errorf("apiserver: %s is not served from a watch cache", gvr)
	}
	if err := e.cache.WaitReady(ctx); err != nil {
		return nil, nil, err
	}
	objs, rev, err := e.cache.List(watchcache.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	w, err := e.cache.Watch(ctx, watchcache.WatchOptions{Mode: watchcache.FromRevision, ResourceVersion: rev})
	if err != nil {
		return nil, nil, err
	}
	out := make(chan ObjectEvent, 64)
	go func() {
		defer close(out)
		defer w.Stop()
		stop := context.AfterFunc(s.watchCtx, w.Stop)
		defer stop()
		for f := range w.Frames() {
			if f.Type != watch.Added && f.Type != watch.Modified && f.Type != watch.Deleted {
				continue
			}
			select {
			case out <- ObjectEvent{Type: f.Type, Object: f.Object()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return objs, out, nil
}
