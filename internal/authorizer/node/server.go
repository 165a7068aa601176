package node

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
)

// ServerSource is the Source of a running API server: its watch caches,
// in process (apiserver.Server.ObjectStream). Wiring, with the mode Node
// before RBAC:
//
//	graph := node.NewGraph()
//	cfg.Authorizer = union(node.New(graph), rbac…)
//	srv := apiserver.New(cfg) …
//	go graph.Run(ctx, node.ServerSource(srv), log) // once srv is ready
func ServerSource(s *apiserver.Server) Source {
	return func(ctx context.Context, gvr schema.GroupVersionResource) ([]runtime.Object, <-chan Event, error) {
		objs, in, err := s.ObjectStream(ctx, gvr)
		if err != nil {
			return nil, nil, err
		}
		out := make(chan Event)
		go func() {
			defer close(out)
			for ev := range in {
				select {
				case out <- Event{Type: ev.Type, Object: ev.Object}:
				case <-ctx.Done():
					for range in {
					}
					return
				}
			}
		}()
		return objs, out, nil
	}
}
