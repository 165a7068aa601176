package apiserver

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/fieldmanager"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// entryMap maps group/version/resource to its entry. A published map is
// never modified: writers copy it.
type entryMap map[schema.GroupVersionResource]*entry

// resourceTable is the set of served resources. The built-in entries are
// added by New and live as long as the server; custom resources come and
// go with their CustomResourceDefinitions (crd.go).
//
// Readers call load and never block; writers serialize on mu, build a new
// map, start and stop watch caches, then publish the map and the new
// discovery and OpenAPI documents, in that order, so that a resource is in
// discovery only once requests for it are served.
type resourceTable struct {
	mu      sync.Mutex
	current atomic.Pointer[entryMap]
	// builtin is the configured resources, in configuration order: they
	// come first in discovery.
	builtin []*registry.Resource
	// cacheCtx is the context of every watch cache; nil until Run starts
	// the caches (entries added before then are started by Run).
	cacheCtx context.Context
	// caches counts running watch caches; Run waits for it on shutdown.
	caches sync.WaitGroup
	// equiv groups the stored resources of the snapshot it was built from
	// by storage prefix (equivalents).
	equiv atomic.Pointer[equivIndex]
}

// equivIndex is the stored resources of one table snapshot by storage
// prefix, each group by group name, then version priority.
type equivIndex struct {
	of       *entryMap
	byPrefix map[string][]*registry.Resource
}

// equivalents returns the current snapshot's resources by storage prefix,
// built on first use after each change of the table.
func (t *resourceTable) equivalents() map[string][]*registry.Resource {
	cur := t.current.Load()
	if idx := t.equiv.Load(); idx != nil && idx.of == cur {
		return idx.byPrefix
	}
	idx := &equivIndex{of: cur, byPrefix: map[string][]*registry.Resource{}}
	if cur != nil {
		for _, en := range *cur {
			if en.store != nil {
				p := en.res.KeyPrefix()
				idx.byPrefix[p] = append(idx.byPrefix[p], en.res)
			}
		}
	}
	for _, rs := range idx.byPrefix {
		slices.SortFunc(rs, func(a, b *registry.Resource) int {
			if c := strings.Compare(a.Group, b.Group); c != 0 {
				return c
			}
			return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
		})
	}
	t.equiv.Store(idx)
	return idx.byPrefix
}

func (t *resourceTable) load() entryMap {
	if m := t.current.Load(); m != nil {
		return *m
	}
	return nil
}

// entry returns the entry of gvr, nil when it is not served.
func (s *Server) entry(gvr schema.GroupVersionResource) *entry { return s.table.load()[gvr] }

// newEntry builds the object layer and watch cache of res; its cache is
// not running yet.
func (s *Server) newEntry(res *registry.Resource) (*entry, error) {
	_, supported, err := res.Attrs(res.New())
	if err != nil {
		return nil, fmt.Errorf("field set of %s: %w", res.GVR(), err)
	}
	for _, f := range res.TriggerFields {
		if _, ok := supported[f]; !ok {
			return nil, fmt.Errorf("trigger field %q of %s is not one of its selectable fields", f, res.GVR())
		}
	}
	e := &entry{res: res, fields: supported}
	if res.Virtual != nil {
		return e, nil // nothing stored, nothing cached
	}
	var onDeleted func(context.Context, runtime.Object)
	if res.AfterDelete != nil {
		env := s.env()
		onDeleted = func(ctx context.Context, obj runtime.Object) { res.AfterDelete(ctx, env, obj) }
	}
	e.store = objects.New(objects.Config{
		Resource: res, Storage: s.cfg.Storage, Codecs: s.codecs, Clock: s.cfg.Clock, Admit: s.admitter(res), Validate: s.validator(res),
		OnDeleted: onDeleted,
	})
	gvk := res.GVK()
	e.cache = watchcache.New(watchcache.Config{
		Store:       s.cfg.Storage,
		Prefix:      res.KeyPrefix(),
		Decode:      e.store.Decode,
		Attrs:       res.Attrs,
		IndexFields: res.TriggerFields,
		Namespaced:  res.Namespaced,
		NewObject: func() runtime.Object {
			obj := res.New()
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			return obj
		},
		Encode:           func(obj runtime.Object, w io.Writer) error { return s.codecs.JSON.Encode(obj, w) },
		EncodeProto:      s.protoEncoder(res.Unstructured),
		Clock:            s.cfg.Clock,
		WindowCapacity:   s.cfg.WatchCacheCapacity,
		BookmarkInterval: s.cfg.BookmarkInterval,
		Logger:           s.log.With("resource", res.GVR().String()),
	})
	return e, nil
}

// startCacheLocked runs e's watch cache under the table's cache context;
// the caller holds t.mu and the caches have been started (cacheCtx set).
func (t *resourceTable) startCacheLocked(e *entry) {
	ctx, cancel := context.WithCancel(t.cacheCtx)
	e.stopCache = cancel
	t.caches.Add(1)
	go func() { defer t.caches.Done(); e.cache.Run(ctx) }()
}

// startCaches starts the watch caches of every entry so far and of every
// entry added later, all ending when ctx does.
func (t *resourceTable) startCaches(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cacheCtx = ctx
	for _, e := range t.load() {
		if e.cache != nil {
			t.startCacheLocked(e)
		}
	}
}

// replace swaps the entries of custom resources: the entries named in
// remove stop being served and those of add start (an entry of add
// replaces one of the same group/version/resource). New caches are ready
// before the entries are published; the discovery and OpenAPI documents
// follow the new table. owner is the CRD state of the added entries. On
// error nothing changes: the new caches are stopped and the OpenAPI
// documents are those of the current table again.
func (s *Server) replace(ctx context.Context, add []*registry.Resource, remove []schema.GroupVersionResource, owner *crdState) error {
	t := &s.table
	t.mu.Lock()
	defer t.mu.Unlock()
	next := maps.Clone(t.load())
	var stopped, started []*entry
	for _, gvr := range remove {
		if e := next[gvr]; e != nil {
			stopped = append(stopped, e)
			delete(next, gvr)
		}
	}
	for _, res := range add {
		e, err := s.newEntry(res)
		if err != nil {
			return err
		}
		if old := next[res.GVR()]; old != nil {
			stopped = append(stopped, old)
		}
		e.crd = owner
		next[res.GVR()] = e
		started = append(started, e)
	}
	resources := orderedResources(t.builtin, next)
	if err := s.oapi.Update(resources); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	if err := s.readyEntriesLocked(ctx, started); err != nil {
		stopCaches(started)
		if rerr := s.oapi.Update(orderedResources(t.builtin, t.load())); rerr != nil {
			s.log.Error("restoring the OpenAPI documents", "err", rerr)
		}
		return err
	}
	t.current.Store(&next)
	stopCaches(stopped)
	return s.disc.Update(resources)
}

// readyEntriesLocked gives new entries their field managers (from the
// OpenAPI documents that already include them) and, once the caches run,
// starts their watch caches and waits until they are ready. The caller
// holds s.table.mu.
func (s *Server) readyEntriesLocked(ctx context.Context, started []*entry) error {
	if len(started) == 0 {
		return nil
	}
	tc, err := fieldmanager.NewTypeConverter(s.oapi.Schemas())
	if err != nil {
		return err
	}
	for _, e := range started {
		if e.fm, err = fieldmanager.New(tc, s.codecs.Scheme, e.res); err != nil {
			return err
		}
	}
	t := &s.table
	if t.cacheCtx == nil {
		return nil // Run starts them with the others
	}
	for _, e := range started {
		t.startCacheLocked(e)
	}
	for _, e := range started {
		if err := e.cache.WaitReady(ctx); err != nil {
			return fmt.Errorf("watch cache %s: %w", e.res.GVR(), err)
		}
	}
	return nil
}

// stopCaches ends the watch caches of entries that run one.
func stopCaches(entries []*entry) {
	for _, e := range entries {
		if e.stopCache != nil {
			e.stopCache()
		}
	}
}

// orderedResources lists the built-in resources in configuration order,
// then the custom ones by group, resource and version priority (the
// preferred version of a group first, as Kubernetes orders CRD versions).
func orderedResources(builtin []*registry.Resource, m entryMap) []*registry.Resource {
	out := slices.Clone(builtin)
	var custom []*registry.Resource
	for _, e := range m {
		if e.res.Unstructured {
			custom = append(custom, e.res)
		}
	}
	slices.SortFunc(custom, func(a, b *registry.Resource) int {
		if a.Group != b.Group {
			return compareStrings(a.Group, b.Group)
		}
		if c := -version.CompareKubeAwareVersionStrings(a.Version, b.Version); c != 0 {
			return c
		}
		return compareStrings(a.Resource, b.Resource)
	})
	return append(out, custom...)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// newDocuments builds the discovery and OpenAPI services of the built-in
// resources.
func (s *Server) newDocuments() error {
	var err error
	if s.disc, err = discovery.New(s.table.builtin); err != nil {
		return err
	}
	s.oapi, err = openapi.New(s.table.builtin, openapi.Options{Version: serverVersion.GitVersion, Logger: s.log})
	return err
}

// terminating reports whether e is a custom resource whose CRD is being
// deleted: its objects are being removed and creates are refused.
func (e *entry) terminating() bool { return e.crd != nil && e.crd.terminating.Load() }

// errTerminatingCRD is Kubernetes' answer to a create of a custom
// resource whose definition is being deleted.
func errTerminatingCRD() error {
	return newStatusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"create not allowed while custom resource definition is terminating")
}
