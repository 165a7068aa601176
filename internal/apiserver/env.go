package apiserver

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// serverEnv is what the registry's hooks see of the server (registry.Env).
type serverEnv struct{ s *Server }

func (s *Server) env() registry.Env { return serverEnv{s} }

// Env is what the server gives admission plugins and hooks (consistent
// reads of its objects, its authorizer, …), for plugins run outside a
// kind's hooks and for their tests.
func (s *Server) Env() registry.Env { return serverEnv{s} }

func (e serverEnv) Objects(gvr schema.GroupVersionResource) registry.Objects {
	en := e.s.entry(gvr)
	if en == nil || en.store == nil {
		return nil
	}
	return entryObjects{e: en, s: e.s}
}

func (e serverEnv) Storage() storage.Store            { return e.s.cfg.Storage }
func (e serverEnv) Clock() clock.PassiveClock         { return e.s.cfg.Clock }
func (e serverEnv) NodeTransport() http.RoundTripper  { return e.s.nodeTransport }
func (e serverEnv) Authorizer() authorizer.Authorizer { return e.s.authz }

// AuthenticateToken authenticates token for audiences as a request bearing
// it would be: a static token, else a service-account token.
func (e serverEnv) AuthenticateToken(ctx context.Context, token string, audiences []string) (registry.UserInfo, []string, error) {
	return e.s.authenticateToken(ctx, token, audiences)
}

func (e serverEnv) ServiceAccountTokens() registry.TokenIssuer { return e.s.tokenIssuer }

// entryObjects is registry.Objects over one entry's object layer and watch
// cache.
type entryObjects struct {
	e *entry
	s *Server
}

func (o entryObjects) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	return o.e.store.Get(ctx, namespace, name)
}

// List is a consistent read, as a list without resourceVersion is: the
// watch cache answers once it has caught up with storage's current
// revision, so an object written just before (a budget created a moment
// ago) is seen.
func (o entryObjects) List(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error) {
	cur, err := o.s.cfg.Storage.CurrentRevision(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := o.e.cache.WaitForRevision(ctx, cur); err != nil {
		return nil, err
	}
	objs, _, err := o.e.cache.List(watchcache.ListOptions{Namespace: namespace, Label: label, Field: field})
	return objs, err
}

// GetCached answers one object from the watch cache as it is
// (registry.CachedGetter).
func (o entryObjects) GetCached(namespace, name string) (runtime.Object, bool, error) {
	obj, ok, _, err := o.e.cache.Get(o.e.res.Key(namespace, name))
	return obj, ok, err
}

// ListCached answers from the watch cache as it is, without waiting for it
// to catch up with storage: admission that kube-apiserver runs on
// informers (Priority) reads this way, and does not wait on every write.
func (o entryObjects) ListCached(_ context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error) {
	objs, _, err := o.e.cache.List(watchcache.ListOptions{Namespace: namespace, Label: label, Field: field})
	return objs, err
}

// ListRecent is List, or ListCached when the watch cache does not catch
// up in time (registry.CachedLister).
func (o entryObjects) ListRecent(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error) {
	objs, err := o.List(ctx, namespace, label, field)
	if errors.Is(err, watchcache.ErrTooLarge) {
		return o.ListCached(ctx, namespace, label, field)
	}
	return objs, err
}

func (o entryObjects) Create(ctx context.Context, namespace string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	return o.e.store.Create(ctx, namespace, obj, objects.WriteOptions{DryRun: dryRun})
}

func (o entryObjects) Update(ctx context.Context, namespace, name string, fn func(runtime.Object) (runtime.Object, error), dryRun bool) (runtime.Object, error) {
	out, _, err := o.e.store.Update(ctx, namespace, name, func(cur runtime.Object) (runtime.Object, error) {
		return fn(cur.DeepCopyObject())
	}, objects.UpdateOptions{WriteOptions: objects.WriteOptions{DryRun: dryRun}})
	return out, err
}

func (o entryObjects) Mutate(ctx context.Context, namespace, name string, fn func(runtime.Object) error, dryRun bool) (runtime.Object, error) {
	return o.e.store.Mutate(ctx, namespace, name, fn, objects.WriteOptions{DryRun: dryRun})
}

func (o entryObjects) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return o.e.store.Delete(ctx, namespace, name, opts)
}

// ResourceForKind finds the served resource of a kind (registry.KindResolver):
// the main resource whose kind and group-version are gvk's.
func (e serverEnv) ResourceForKind(gvk schema.GroupVersionKind) *registry.Resource {
	for gvr, en := range e.s.table.load() {
		if gvr.Group == gvk.Group && gvr.Version == gvk.Version && en.res.Kind == gvk.Kind && en.store != nil {
			return en.res
		}
	}
	return nil
}

// TypeConverterFor is the type converter of gvr's objects
// (registry.TypeConverterSource), nil when it has no field manager.
func (e serverEnv) TypeConverterFor(gvr schema.GroupVersionResource) managedfields.TypeConverter {
	en := e.s.entry(gvr)
	if en == nil || en.fm == nil {
		return nil
	}
	return en.fm.TypeConverter()
}

// EquivalentResources returns the served resources stored as res's objects
// are (registry.EquivalentResolver), res excluded, that serve subresource.
// The grouping by storage prefix is built once per table snapshot: admission
// asks on every write a webhook or policy does not match directly.
func (e serverEnv) EquivalentResources(res *registry.Resource, subresource string) []*registry.Resource {
	var out []*registry.Resource
	for _, r := range e.s.table.equivalents()[res.KeyPrefix()] {
		if r.GVR() != res.GVR() && r.HasSubresource(subresource) {
			out = append(out, r)
		}
	}
	return out
}
