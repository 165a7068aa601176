package watchcache

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// ListOptions select the objects of a List.
type ListOptions struct {
	// Namespace limits the list to one namespace; "" lists all. Ignored for
	// cluster-scoped resources.
	Namespace string
	// Label and Field select objects; nil selects everything.
	Label labels.Selector
	Field fields.Selector
}

// List returns the current objects that opts selects, sorted by storage
// key, and the cache revision they are current to. The objects are shared
// with the cache and every other reader: callers must not mutate them
// (DeepCopyObject first). Fails with ErrNotReady or ErrStopped.
func (c *Cache) List(opts ListOptions) ([]runtime.Object, int64, error) {
	var out []runtime.Object
	rev, err := c.list(opts, func(o *object) { out = append(out, o.obj) })
	return out, rev, err
}

// Get returns the current object under the storage key (shared: do not
// mutate), whether it exists, and the cache revision. Fails with
// ErrNotReady or ErrStopped.
func (c *Cache) Get(key string) (runtime.Object, bool, int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.readableLocked(); err != nil {
		return nil, false, 0, err
	}
	o, ok := c.objects.Get(&object{key: key})
	if !ok {
		return nil, false, c.rev.Load(), nil
	}
	return o.obj, true, c.rev.Load(), nil
}

func (c *Cache) readableLocked() error {
	switch {
	case c.stopped:
		return ErrStopped
	case !c.ready:
		return ErrNotReady
	}
	return nil
}

// ascendLocked visits the current objects of one namespace ("" = all) in
// key order until visit returns false. c.mu is held.
func (c *Cache) ascendLocked(namespace string, visit func(*object) bool) {
	if namespace == "" {
		c.objects.Ascend(visit)
		return
	}
	from := c.cfg.Prefix + namespace + "/"
	to := c.cfg.Prefix + namespace + "0" // '0' is the byte after '/'
	c.objects.AscendRange(&object{key: from}, &object{key: to}, visit)
}
