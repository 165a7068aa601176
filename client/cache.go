package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
)

// ErrCacheNotStarted is returned by cached reads before the manager runs.
var ErrCacheNotStarted = errors.New("client: the cache is not started (reads from the cache work once the manager runs)")

// InformerFunc returns the running informer of items of Go type typ
// (newList makes their lists) over mapping m, starting it when it is new.
// The manager provides it; it fails with ErrCacheNotStarted before Start.
type InformerFunc func(ctx context.Context, typ reflect.Type, newList func() runtime.Object, gvk schema.GroupVersionKind, m Mapping) (informer.Untyped, error)

// CacheOptions configure NewCache.
type CacheOptions struct {
	Scheme   *runtime.Scheme
	Mapper   RESTMapper
	Informer InformerFunc
}

// Cache is a Reader over informers, started on first use, and the
// FieldIndexer of their field indexes. Get and List return deep copies of
// the cached objects unless told UnsafeDisableDeepCopy.
type Cache struct {
	opts CacheOptions

	mu sync.Mutex
	// indexes holds the field indexes by Go type and kind, installed on
	// the informer of the type and kind when it is first used (at once on
	// a running one).
	indexes map[usedKey]map[string]IndexerFunc
	// used holds the informers read so far, by Go type and kind.
	used map[usedKey]informer.Untyped
}

type usedKey struct {
	typ reflect.Type
	gvk schema.GroupVersionKind
}

// NewCache returns a cache reading through opts.Informer.
func NewCache(opts CacheOptions) *Cache {
	return &Cache{opts: opts, indexes: map[usedKey]map[string]IndexerFunc{}, used: map[usedKey]informer.Untyped{}}
}

// allNamespaces prefixes the cluster-wide values of field indexes.
const allNamespaces = "__all_namespaces"

func fieldIndexName(field string) string { return "field:" + field }

// IndexField implements FieldIndexer. The index serves List calls on
// lists of obj's Go type (typed, unstructured or metadata-only alike: each
// is its own informer).
func (c *Cache) IndexField(ctx context.Context, obj Object, field string, extract IndexerFunc) error {
	gvk, err := GVKForObject(obj, c.opts.Scheme)
	if err != nil {
		return err
	}
	key := usedKey{reflect.TypeOf(obj), gvk}
	c.mu.Lock()
	if c.indexes[key] == nil {
		c.indexes[key] = map[string]IndexerFunc{}
	}
	if _, dup := c.indexes[key][field]; dup {
		c.mu.Unlock()
		return fmt.Errorf("client: field index %q of %s exists already", field, gvk)
	}
	c.indexes[key][field] = extract
	running := c.used[key]
	c.mu.Unlock()
	if running != nil {
		return installIndex(running, field, extract)
	}
	return nil
}

func installIndex(inf informer.Untyped, field string, extract IndexerFunc) error {
	return inf.AddIndexer(fieldIndexName(field), func(obj informer.Object) ([]string, error) {
		vals := extract(obj)
		out := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			out = append(out, allNamespaces+"/"+v)
			if ns := obj.GetNamespace(); ns != "" {
				out = append(out, ns+"/"+v)
			}
		}
		return out, nil
	})
}

// informer returns the synced informer of typ and gvk.
func (c *Cache) informer(ctx context.Context, typ reflect.Type, gvk schema.GroupVersionKind) (informer.Untyped, Mapping, error) {
	m, err := c.opts.Mapper.RESTMapping(ctx, gvk)
	if err != nil {
		return nil, m, err
	}
	key := usedKey{typ, gvk}
	c.mu.Lock()
	inf, ok := c.used[key]
	c.mu.Unlock()
	if !ok {
		newList, err := listTypeFor(typ, gvk, c.opts.Scheme)
		if err != nil {
			return nil, m, err
		}
		if inf, err = c.opts.Informer(ctx, typ, newList, gvk, m); err != nil {
			return nil, m, err
		}
		c.mu.Lock()
		if prev, ok := c.used[key]; ok {
			inf = prev
		} else {
			c.used[key] = inf
			have := map[string]bool{}
			for _, n := range inf.IndexNames() {
				have[n] = true
			}
			for field, fn := range c.indexes[key] {
				if !have[fieldIndexName(field)] {
					if err := installIndex(inf, field, fn); err != nil {
						c.mu.Unlock()
						return nil, m, err
					}
				}
			}
		}
		c.mu.Unlock()
	}
	if !inf.HasSynced() && !informer.WaitForCacheSync(ctx, inf.HasSynced) {
		return nil, m, fmt.Errorf("client: cache of %s not synced: %w (last list error: %v)", m.GVR, ctx.Err(), inf.LastError())
	}
	return inf, m, nil
}

// Get implements Reader.
func (c *Cache) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	gvk, err := GVKForObject(obj, c.opts.Scheme)
	if err != nil {
		return err
	}
	inf, m, err := c.informer(ctx, reflect.TypeOf(obj), gvk)
	if err != nil {
		return err
	}
	k := key.Name
	if m.Namespaced {
		k = key.Namespace + "/" + key.Name
	}
	cached, ok, err := inf.GetByKey(k)
	if err != nil {
		return err
	}
	if !ok {
		return apierrors.NewNotFound(m.GVR.GroupResource(), key.Name)
	}
	if getOptions(opts).UnsafeDisableDeepCopy {
		if err := assign(obj, cached); err != nil {
			return err
		}
		if _, u := obj.(*unstructured.Unstructured); !u {
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return nil
	}
	cp := cached.DeepCopyObject()
	cp.GetObjectKind().SetGroupVersionKind(gvk)
	return assign(obj, cp)
}

// List implements Reader.
func (c *Cache) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	typ, gvk, err := itemType(list, c.opts.Scheme)
	if err != nil {
		return err
	}
	inf, m, err := c.informer(ctx, typ, gvk)
	if err != nil {
		return err
	}
	lo := ListOptionsFrom(opts)
	if !m.Namespaced {
		lo.Namespace = ""
	}
	objs, rest, err := candidates(inf, lo)
	if err != nil {
		return fmt.Errorf("client: list %s: %w", m.GVR, err)
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if lo.Namespace != "" && o.GetNamespace() != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		if !rest.matches(o) {
			continue
		}
		if lo.UnsafeDisableDeepCopy {
			out = append(out, o)
			continue
		}
		cp := o.DeepCopyObject()
		cp.GetObjectKind().SetGroupVersionKind(gvk)
		out = append(out, cp)
	}
	return setList(list, out)
}

// fieldFilter holds the field requirements List checks object by object.
type fieldFilter []fields.Requirement

func (f fieldFilter) matches(o informer.Object) bool {
	for _, r := range f {
		var v string
		switch r.Field {
		case "metadata.name":
			v = o.GetName()
		case "metadata.namespace":
			v = o.GetNamespace()
		}
		if (r.Operator == selection.NotEquals) == (v == r.Value) {
			return false
		}
	}
	return true
}

// candidates returns the objects that may match lo, read through the best
// index, and the field requirements left to check on each.
func candidates(inf informer.Untyped, lo ListOptions) ([]informer.Object, fieldFilter, error) {
	var left fieldFilter
	var indexed []fields.Requirement
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		have := map[string]bool{}
		for _, n := range inf.IndexNames() {
			have[n] = true
		}
		for _, r := range lo.FieldSelector.Requirements() {
			switch {
			case r.Field == "metadata.name" || r.Field == "metadata.namespace":
				left = append(left, r)
			case !have[fieldIndexName(r.Field)]:
				return nil, nil, fmt.Errorf("field selector %q: no field index %q (register one with IndexField)", r.Field+string(r.Operator)+r.Value, r.Field)
			case r.Operator == selection.Equals || r.Operator == selection.DoubleEquals:
				indexed = append(indexed, r)
			default:
				return nil, nil, fmt.Errorf("field selector on %q: only = and == are supported by field indexes", r.Field)
			}
		}
	}
	if len(indexed) == 0 {
		if lo.Namespace != "" {
			objs, err := inf.ByIndex(cache.NamespaceIndex, lo.Namespace)
			return objs, left, err
		}
		return inf.List(), left, nil
	}
	// Intersect the indexed requirements, smallest set first.
	var sets [][]informer.Object
	for _, r := range indexed {
		prefix := allNamespaces
		if lo.Namespace != "" {
			prefix = lo.Namespace
		}
		objs, err := inf.ByIndex(fieldIndexName(r.Field), prefix+"/"+r.Value)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, objs)
	}
	out := sets[0]
	for _, s := range sets[1:] {
		in := map[string]bool{}
		for _, o := range s {
			in[o.GetNamespace()+"/"+o.GetName()] = true
		}
		kept := out[:0:0]
		for _, o := range out {
			if in[o.GetNamespace()+"/"+o.GetName()] {
				kept = append(kept, o)
			}
		}
		out = kept
	}
	return out, left, nil
}
