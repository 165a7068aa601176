package informer

import (
	"hash/maphash"
	"reflect"
	"sync"
	"unsafe"
)

// Compaction chooses how an informer shrinks the objects it caches. It
// runs after Options.Transform, on objects fresh from the decoder, and
// never changes what an object says: the compacted object is
// reflect.DeepEqual to the one the transform returned.
type Compaction int

const (
	// CompactShare, the default, does what CompactStrings does and in
	// addition lets equal sub-objects of different cached objects share
	// one copy: a slice, map or pointed-to value that equals one already
	// cached is replaced by that one. The pods of a ReplicaSet then share
	// their containers, volumes, tolerations, labels and owner references.
	// This is safe only because cached objects must never be modified (see
	// "Shared objects" in the package documentation): writing to a shared
	// sub-object would change every object holding it.
	CompactShare Compaction = iota
	// CompactStrings interns strings (equal strings of cached objects
	// share their bytes) and trims slices to their length, and shares
	// nothing else.
	CompactStrings
	// CompactNone caches objects as the transform returns them.
	CompactNone
)

// Bounds of a compactor's tables. Each holds at most two generations of
// this many entries (see genTable), so a compactor's own memory is bounded
// whatever the churn of cached objects.
const (
	maxInternedStrings = 1 << 16
	maxSharedValues    = 1 << 16
	maxSeenValues      = 1 << 17
)

// compactor canonicalises the objects of one informer. It is safe for
// concurrent use; Compact holds mu for one whole object.
//
// Invariants: every value in strs and nodes is canonical and immutable:
// it is reachable from an object handed to the cache (or was, before that
// object was replaced), and it is never written again. Values are found
// by a hash of their shallow content, in which strings count by content
// and references (pointers, slices, maps) by identity; since children are
// canonicalised before their parents, equal sub-trees have identical
// children, so the shallow comparison decides deep equality without ever
// merging unequal values (a missed canonical child only costs sharing).
type compactor struct {
	mu    sync.Mutex
	share bool
	seed  maphash.Seed
	// strs maps a string to its canonical copy, boxed in an interface so
	// that the interface values of unstructured objects share the box too.
	strs genTable[string, any]
	// nodes maps a (type, shallow content) hash to a canonical slice, map
	// or pointer of that type; a hash collision just leaves the newcomer
	// unshared.
	nodes genTable[uint64, node]
	// json maps a shallow-content hash to a canonical map[string]any or
	// []any (the values of unstructured objects).
	json genTable[uint64, any]
	// seen holds the hashes of strings and sub-objects seen once: only a
	// value seen again enters strs, nodes or json (see admit).
	seen genTable[uint64, struct{}]
	// plans memoises, per type, what of it needs compacting.
	plans map[reflect.Type]*plan
}

// node is a canonical slice, map or pointer, kept without reference to the
// object it was first found in. ptr is the pointer, the map, or the
// slice's first element; n is a slice's length.
type node struct {
	t   reflect.Type
	ptr unsafe.Pointer
	n   int
}

// newCompactor returns the compactor of mode, nil for CompactNone.
func newCompactor(mode Compaction) *compactor {
	if mode == CompactNone {
		return nil
	}
	return &compactor{
		share: mode == CompactShare,
		seed:  maphash.MakeSeed(),
		strs:  newGenTable[string, any](maxInternedStrings),
		nodes: newGenTable[uint64, node](maxSharedValues),
		json:  newGenTable[uint64, any](maxSharedValues),
		seen:  newGenTable[uint64, struct{}](maxSeenValues),
		plans: map[reflect.Type]*plan{},
	}
}

// Compact canonicalises obj in place: obj must be a pointer the caller
// owns and nobody else has seen (an object fresh from the decoder). Its
// own top-level struct is never shared.
func (c *compactor) Compact(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.walk(v.Elem(), c.plan(v.Type().Elem()))
}

// walk canonicalises the addressable value v in place: its strings are
// interned and, when sharing, each slice, map and pointer in it is replaced
// by its canonical equal.
func (c *compactor) walk(v reflect.Value, p *plan) {
	if !p.work {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" {
			v.SetString(c.str(s))
		}
	case reflect.Struct:
		for _, f := range p.fields {
			c.walk(v.Field(f.index), f.plan)
		}
	case reflect.Array:
		for i := range v.Len() {
			c.walk(v.Index(i), p.elem)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			c.walk(v.Elem(), p.elem)
			c.canonical(v, p)
		}
	case reflect.Slice:
		c.slice(v, p)
	case reflect.Map:
		c.mapValue(v, p)
	case reflect.Interface:
		c.iface(v)
	}
}

// str returns the canonical copy of s.
func (c *compactor) str(s string) string { return c.boxedStr(s).(string) }

// boxedStr returns the canonical copy of s in an interface.
func (c *compactor) boxedStr(s string) any {
	if cs, ok := c.strs.get(s); ok {
		return cs
	}
	var box any = s
	if c.admit(maphash.String(c.seed, s)) {
		c.strs.put(s, box)
	}
	return box
}

// slice compacts the elements of v, then shares or trims v.
func (c *compactor) slice(v reflect.Value, p *plan) {
	if v.Len() == 0 {
		return // nil or empty: nothing allocated to save
	}
	if p.elem.work {
		for i := range v.Len() {
			c.walk(v.Index(i), p.elem)
		}
	}
	var h uint64
	if c.share {
		var found bool
		if h, found = c.lookup(v, p); found {
			return
		}
	}
	if v.Cap() > v.Len() {
		trimmed := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(trimmed, v)
		v.Set(trimmed)
	}
	if c.share {
		c.offer(h, v)
	}
}

// iface compacts the dynamic value of the interface v.
func (c *compactor) iface(v reflect.Value) {
	if v.IsNil() {
		return
	}
	if v.Type() == anyType {
		if out := c.anyValue(v.Interface()); out != nil {
			v.Set(reflect.ValueOf(out))
		}
		return
	}
	e := v.Elem()
	ep := c.plan(e.Type())
	if !ep.work {
		return
	}
	if e.Kind() == reflect.Pointer {
		// The pointee is addressable: compact it in place, then share
		// the pointer through an addressable copy.
		c.walk(e.Elem(), ep.elem)
		if c.share {
			tmp := reflect.New(e.Type()).Elem()
			tmp.Set(e)
			if c.canonical(tmp, ep) {
				v.Set(tmp)
			}
		}
		return
	}
	tmp := reflect.New(e.Type()).Elem()
	tmp.Set(e)
	c.walk(tmp, ep)
	v.Set(tmp)
}

// canonical replaces the slice, map or pointer v by its canonical equal
// and reports whether it did; when there is none, v is offered as one.
func (c *compactor) canonical(v reflect.Value, p *plan) bool {
	if !c.share {
		return false
	}
	h, found := c.lookup(v, p)
	if !found {
		c.offer(h, v)
	}
	return found
}

// lookup replaces the slice, map or pointer v by its canonical equal, if
// there is one, and returns the hash of v.
func (c *compactor) lookup(v reflect.Value, p *plan) (h uint64, found bool) {
	h = c.shallowHash(v, p)
	n, ok := c.nodes.get(h)
	if !ok || n.t != v.Type() {
		return h, false
	}
	cv := n.value()
	if !shallowEqual(cv, v) {
		return h, false // a collision: v stays unshared
	}
	v.Set(cv)
	return h, true
}

// offer makes v, of hash h, canonical if its hash was seen before.
func (c *compactor) offer(h uint64, v reflect.Value) {
	if c.admit(h) {
		c.nodes.put(h, nodeOf(v))
	}
}

// admit tells whether the value of hash h was seen before (and so is
// worth keeping as canonical), and records that it has been seen. Values
// seen once are never kept, so the tables hold no unique string or
// sub-object: they pin nothing after the objects holding them are gone.
func (c *compactor) admit(h uint64) bool {
	if _, ok := c.seen.get(h); ok {
		return true
	}
	c.seen.put(h, struct{}{})
	return false
}

// nodeOf records the reference v (a slice, map or pointer).
func nodeOf(v reflect.Value) node {
	n := node{t: v.Type(), ptr: v.UnsafePointer()}
	if v.Kind() == reflect.Slice {
		n.n = v.Len()
	}
	return n
}

// value rebuilds the reference the node records.
func (n node) value() reflect.Value {
	switch n.t.Kind() {
	case reflect.Slice:
		hdr := &sliceHeader{data: n.ptr, len: n.n, cap: n.n}
		return reflect.NewAt(n.t, unsafe.Pointer(hdr)).Elem()
	case reflect.Map:
		p := n.ptr
		return reflect.NewAt(n.t, unsafe.Pointer(&p)).Elem()
	default:
		return reflect.NewAt(n.t.Elem(), n.ptr)
	}
}

// sliceHeader is the memory layout of a Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

var anyType = reflect.TypeFor[any]()
