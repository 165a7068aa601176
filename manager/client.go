package manager

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/informer"
)

// clients are the manager's client.Client, its cache and its API reader,
// built by New.
type clients struct {
	cache  *client.Cache
	client client.Client
	api    client.Reader
}

// restMapper adapts the manager's discovery mapper to client.RESTMapper.
type restMapper struct{ m *mapper }

func (r restMapper) RESTMapping(ctx context.Context, gvk schema.GroupVersionKind) (client.Mapping, error) {
	mp, err := r.m.mappingFor(ctx, gvk)
	if err != nil {
		return client.Mapping{}, err
	}
	return client.Mapping{GVR: mp.GVR, Namespaced: mp.Namespaced}, nil
}

func (m *Manager) newClients() (*clients, error) {
	rm := restMapper{m.mapper}
	ca := client.NewCache(client.CacheOptions{Scheme: m.scheme, Mapper: rm, Informer: m.untypedInformer})
	cl, err := client.New(client.Options{REST: m.client, Mapper: rm, Cache: ca})
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return &clients{cache: ca, client: cl, api: client.NewAPIReader(m.client, rm)}, nil
}

// GetClient returns the manager's client: Get and List read deep copies
// from the manager's informers (started on first use once the manager
// runs; reads before Start fail with client.ErrCacheNotStarted), writes go
// to the server; every Go type of the manager's scheme, unstructured and
// metadata-only objects too. Give it to your reconcilers.
func (m *Manager) GetClient() client.Client { return m.clients.client }

// GetFieldIndexer registers field indexes on the manager's cache, for
// List(..., client.MatchingFields{...}). Register them before Start.
func (m *Manager) GetFieldIndexer() client.FieldIndexer { return m.clients.cache }

// GetAPIReader returns a reader that reads from the server, uncached.
func (m *Manager) GetAPIReader() client.Reader { return m.clients.api }

// untypedInformer is the client cache's client.InformerFunc: the shared,
// tracked informer of typ over mp, started at once.
func (m *Manager) untypedInformer(_ context.Context, typ reflect.Type, newList func() runtime.Object, gvk schema.GroupVersionKind, mp client.Mapping) (informer.Untyped, error) {
	m.mu.Lock()
	infCtx := m.infCtx
	m.mu.Unlock()
	if infCtx == nil {
		return nil, client.ErrCacheNotStarted
	}
	inf, err := informer.ForType(m.factory, typ, newList, mp.GVR, mp.Namespaced)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	key := fmt.Sprintf("%s|%s", typ, mp.GVR)
	m.mu.Lock()
	if _, ok := m.informers[key]; !ok {
		m.informers[key] = &tracked{resource: describe(mp.GVR), hasSynced: inf.HasSynced, lastError: inf.LastError,
			mutations: inf.CheckMutations}
	}
	m.mu.Unlock()
	m.factory.Start(infCtx)
	return inf, nil
}

// CheckCacheMutations reports cached objects modified in place by
// anybody (listers hand out the shared objects; the client's
// UnsafeDisableDeepCopy reads do too): a *cache.MutationError per
// informer, joined. It finds something only when the cache's mutation
// detector is on (cache.MutationDetectorEnv; testenv.StartT sets it).
func (m *Manager) CheckCacheMutations() error {
	var errs []error
	for _, t := range m.trackedInformers() {
		if t.mutations == nil {
			continue
		}
		if err := t.mutations(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.resource, err))
		}
	}
	return errors.Join(errs...)
}
