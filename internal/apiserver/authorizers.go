package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	nodeauthz "github.com/setpoint-dev/setpoint/internal/authorizer/node"
	rbacauthz "github.com/setpoint-dev/setpoint/internal/authorizer/rbac"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// Authorization modes, as kube-apiserver's --authorization-mode names them.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeRBAC        = "RBAC"
	ModeNode        = "Node"
)

// DefaultAuthorizationModes is what a server authorizes with when its
// configuration names no mode: Node then RBAC, as kubeadm sets
// kube-apiserver (kube's default RBAC policy binds no role to the nodes:
// they act through the Node authorizer).
var DefaultAuthorizationModes = []string{ModeNode, ModeRBAC}

// authorizers are the server's authorizer and the parts of it the server
// feeds from its watch caches (nil when their mode is off).
type authorizers struct {
	authz authorizer.Authorizer
	rbac  *rbacauthz.Authorizer
	graph *nodeauthz.Graph
}

// buildAuthorizer returns the server's authorizer: the members of
// system:masters are allowed first, as kube-apiserver allows them, then
// the modes in their order (the first Allow or Deny decides). The RBAC
// authorizer it builds is returned too, for the server to feed.
func buildAuthorizer(modes []string) (authorizers, error) {
	chain := []authorizer.Authorizer{authorizer.PrivilegedGroups(authorizer.SystemMasters)}
	var out authorizers
	seen := map[string]bool{}
	for _, m := range modes {
		if seen[m] {
			return authorizers{}, fmt.Errorf("authorization-mode %q has mode specified more than once", m)
		}
		seen[m] = true
		var a authorizer.Authorizer
		switch m {
		case ModeAlwaysAllow:
			a = authorizer.AlwaysAllow{}
		case ModeAlwaysDeny:
			a = authorizer.AlwaysDeny{}
		case ModeRBAC:
			out.rbac = rbacauthz.New()
			a = out.rbac
		case ModeNode:
			out.graph = nodeauthz.NewGraph()
			a = nodeauthz.New(out.graph)
		default:
			return authorizers{}, fmt.Errorf("authorization-mode %q is not a valid mode", m)
		}
		chain = append(chain, authorizer.Named(strings.ToLower(m), a))
	}
	if len(modes) == 0 {
		return authorizers{}, errors.New("at least one authorization-mode must be passed")
	}
	out.authz = authorizer.Union(chain...)
	return out, nil
}

// feedNodeGraph keeps the Node authorizer's graph current from the watch
// caches (pods, persistent volumes, attachments, slices, pod certificate
// requests) until ctx ends.
func (s *Server) feedNodeGraph(ctx context.Context, g *nodeauthz.Graph) {
	go g.Run(ctx, s.NodeGraphSource(), s.log.With("authorizer", "node"))
}

// NodeGraphSource streams the server's watch caches to a Node authorizer
// graph (the server's own, or a test's).
func (s *Server) NodeGraphSource() nodeauthz.Source {
	return func(ctx context.Context, gvr schema.GroupVersionResource) ([]runtime.Object, <-chan nodeauthz.Event, error) {
		objs, in, err := s.ObjectStream(ctx, gvr)
		if err != nil {
			return nil, nil, err
		}
		out := make(chan nodeauthz.Event)
		go func() {
			defer close(out)
			for ev := range in {
				select {
				case out <- nodeauthz.Event{Type: ev.Type, Object: ev.Object}:
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

// feedRBAC keeps the RBAC authorizer fed from the watch caches of the four
// RBAC resources until ctx ends: each watch starts with every object
// (handed over in one Replace), then each change; a watch that ends (a
// slow consumer, a restarted cache) starts over. A server that does not
// serve a resource feeds it empty.
func (s *Server) feedRBAC(ctx context.Context, az *rbacauthz.Authorizer) {
	for _, res := range rbacauthz.Resources {
		e := s.entry(rbacv1.SchemeGroupVersion.WithResource(res))
		if e == nil || e.cache == nil {
			_ = az.Replace(res, nil)
			continue
		}
		s.table.caches.Add(1) // Run waits for the feeds as for the caches
		go func() {
			defer s.table.caches.Done()
			for ctx.Err() == nil {
				err := feedOnce(ctx, e.cache, res, az)
				if ctx.Err() != nil {
					return
				}
				s.log.Debug("RBAC feed restarts", "resource", res, "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
}

func feedOnce(ctx context.Context, c *watchcache.Cache, res string, az *rbacauthz.Authorizer) error {
	w, err := c.Watch(ctx, watchcache.WatchOptions{Mode: watchcache.InitialEvents, SendInitialEvents: true, BufferSize: 10000})
	if err != nil {
		return err
	}
	defer w.Stop()
	var initial []runtime.Object
	listing := true
	for f := range w.Frames() {
		switch f.Type {
		case watch.Added, watch.Modified:
			if listing {
				initial = append(initial, f.Object())
			} else if err := az.Set(f.Object()); err != nil {
				return err
			}
		case watch.Deleted:
			if err := az.Delete(f.Object()); err != nil {
				return err
			}
		case watch.Bookmark:
			if listing {
				if err := az.Replace(res, initial); err != nil {
					return err
				}
				listing, initial = false, nil
			}
		case watch.Error:
			return fmt.Errorf("watch of %s ended: %v", res, w.Err())
		}
	}
	return fmt.Errorf("watch of %s ended: %v", res, w.Err())
}
