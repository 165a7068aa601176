package informer

import (
	"hash/maphash"
	"math"
	"reflect"
	"unsafe"
)

// mapValue compacts the map v: keys and values are compacted into a new
// map of exactly their number (interning a key needs a new entry), which
// is then shared.
func (c *compactor) mapValue(v reflect.Value, p *plan) {
	if v.Len() == 0 {
		return
	}
	t := v.Type()
	if t == jsonMapType {
		v.Set(reflect.ValueOf(c.jsonMap(v.Interface().(map[string]any))))
		return
	}
	kw, ew := p.key.work, p.elem.work
	if kw || ew {
		out := reflect.MakeMapWithSize(t, v.Len())
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		it := v.MapRange()
		for it.Next() {
			k.SetIterKey(it)
			e.SetIterValue(it)
			if kw {
				c.walk(k, p.key)
			}
			if ew {
				c.walk(e, p.elem)
			}
			out.SetMapIndex(k, e)
		}
		v.Set(out)
	}
	c.canonical(v, p)
}

var jsonMapType = reflect.TypeFor[map[string]any]()

// anyValue returns x compacted. The values of unstructured objects
// (strings, maps, slices, numbers, booleans) take a fast path without
// reflection.
func (c *compactor) anyValue(x any) any {
	switch x := x.(type) {
	case nil, bool, int64, float64:
		return x
	case string:
		return c.boxedStr(x)
	case map[string]any:
		return c.jsonMap(x)
	case []any:
		return c.jsonSlice(x)
	}
	rv := reflect.ValueOf(x)
	p := c.plan(rv.Type())
	if !p.work {
		return x
	}
	if rv.Kind() == reflect.Pointer {
		c.walk(rv.Elem(), p.elem)
		if c.share {
			tmp := reflect.New(rv.Type()).Elem()
			tmp.Set(rv)
			if c.canonical(tmp, p) {
				return tmp.Interface()
			}
		}
		return x
	}
	tmp := reflect.New(rv.Type()).Elem()
	tmp.Set(rv)
	c.walk(tmp, p)
	return tmp.Interface()
}

// jsonMap returns m compacted: a new map with canonical keys and values,
// or the canonical map equal to it.
func (c *compactor) jsonMap(m map[string]any) map[string]any {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]any, len(m))
	var sum uint64
	for k, v := range m {
		cv := c.anyValue(v)
		out[c.str(k)] = cv
		sum += c.hashAny(mix(1, maphash.String(c.seed, k)), cv)
	}
	if !c.share {
		return out
	}
	h := mix(mix(jsonMapSeed, uint64(len(out))), sum)
	if cm, ok := c.json.get(h); ok {
		if cm, ok := cm.(map[string]any); ok && jsonMapEqual(cm, out) {
			return cm
		}
		return out
	}
	if c.admit(h) {
		c.json.put(h, out)
	}
	return out
}

// jsonSlice compacts the elements of s in place and returns s trimmed, or
// the canonical slice equal to it.
func (c *compactor) jsonSlice(s []any) []any {
	if len(s) == 0 {
		return s
	}
	h := mix(jsonSliceSeed, uint64(len(s)))
	for i, v := range s {
		s[i] = c.anyValue(v)
		h = c.hashAny(h, s[i])
	}
	if c.share {
		if cs, ok := c.json.get(h); ok {
			if cs, ok := cs.([]any); ok && jsonSliceEqual(cs, s) {
				return cs
			}
			return s
		}
	}
	if cap(s) > len(s) {
		s = append([]any(nil), s...)
	}
	if c.share && c.admit(h) {
		c.json.put(h, s)
	}
	return s
}

const (
	jsonMapSeed   = 0x6a09e667f3bcc908
	jsonSliceSeed = 0xbb67ae8584caa73b
)

// hashAny folds the compacted JSON value x into h: scalars and strings by
// value, maps and slices by identity.
func (c *compactor) hashAny(h uint64, x any) uint64 {
	switch x := x.(type) {
	case nil:
		return mix(h, 3)
	case string:
		return mix(h, maphash.String(c.seed, x))
	case bool:
		if x {
			return mix(h, 1)
		}
		return mix(h, 2)
	case int64:
		return mix(mix(h, 4), uint64(x))
	case float64:
		return mix(mix(h, 5), math.Float64bits(x))
	case map[string]any:
		return mix(h, uint64(uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&x)))))
	case []any:
		return mix(mix(h, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(x))))), uint64(len(x)))
	}
	rv := reflect.ValueOf(x)
	return c.hashContent(mix(h, c.plan(rv.Type()).id), rv)
}

// anyEqual compares like hashAny hashes.
func anyEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string, bool, int64:
		return a == b
	case float64:
		bf, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(bf)
	case map[string]any:
		bm, ok := b.(map[string]any)
		return ok && sameMap(a, bm)
	case []any:
		bs, ok := b.([]any)
		return ok && len(a) == len(bs) && (a == nil) == (bs == nil) && unsafe.SliceData(a) == unsafe.SliceData(bs)
	}
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	return av.Type() == bv.Type() && contentEqual(av, bv)
}

func sameMap(a, b map[string]any) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

func jsonMapEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !anyEqual(av, bv) {
			return false
		}
	}
	return true
}

func jsonSliceEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !anyEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
