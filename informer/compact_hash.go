package informer

import (
	"bytes"
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
)

// plan is what the compactor knows of one type.
type plan struct {
	// id distinguishes the type in hashes.
	id uint64
	// work is true when values of the type hold something to compact:
	// strings, slices, maps, pointers or interfaces, reached through
	// exported fields. Structs with unexported fields (resource.Quantity,
	// time.Time) are opaque: compared and hashed, never modified.
	work bool
	// fields are a struct's fields with work.
	fields []fieldPlan
	// elem is the plan of a pointer's, slice's, array's or map's
	// elements; key the plan of a map's keys.
	elem, key *plan
}

// fieldPlan is a struct field with work.
type fieldPlan struct {
	index int
	plan  *plan
}

func (c *compactor) plan(t reflect.Type) *plan {
	if p, ok := c.plans[t]; ok {
		return p
	}
	p := &plan{id: maphash.String(c.seed, t.PkgPath()+"."+t.String())}
	c.plans[t] = p
	// Plans are registered before their parts, so a recursive type (which
	// recurs through a pointer, slice or map: work is true at once) finds
	// its own plan.
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		p.work = true
	case reflect.Pointer, reflect.Slice:
		p.work = true
		p.elem = c.plan(t.Elem())
	case reflect.Map:
		p.work = true
		p.key, p.elem = c.plan(t.Key()), c.plan(t.Elem())
	case reflect.Array:
		p.elem = c.plan(t.Elem())
		p.work = p.elem.work
	case reflect.Struct:
		var fields []fieldPlan
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				return p // opaque
			}
			if fp := c.plan(f.Type); fp.work {
				fields = append(fields, fieldPlan{index: i, plan: fp})
			}
		}
		p.fields, p.work = fields, len(fields) > 0
	}
	return p
}

// mix folds x into the hash h.
func mix(h, x uint64) uint64 {
	return bits.RotateLeft64((h^x)*0x9e3779b97f4a7c15, 31)
}

// shallowHash hashes the slice, map or pointer v by its content one level
// down, and its type.
func (c *compactor) shallowHash(v reflect.Value, p *plan) uint64 {
	h := p.id
	switch v.Kind() {
	case reflect.Pointer:
		return c.hashContent(h, v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return mix(h, maphash.Bytes(c.seed, v.Bytes()))
		}
		h = mix(h, uint64(v.Len()))
		for i := range v.Len() {
			h = c.hashContent(h, v.Index(i))
		}
		return h
	default: // map: order-independent sum of its entries
		var sum uint64
		it := v.MapRange()
		for it.Next() {
			sum += c.hashContent(c.hashContent(1, it.Key()), it.Value())
		}
		return mix(mix(h, uint64(v.Len())), sum)
	}
}

// hashContent folds v into h: strings and scalars by value, references
// by identity.
func (c *compactor) hashContent(h uint64, v reflect.Value) uint64 {
	switch v.Kind() {
	case reflect.String:
		return mix(h, maphash.String(c.seed, v.String()))
	case reflect.Bool:
		if v.Bool() {
			return mix(h, 1)
		}
		return mix(h, 2)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return mix(h, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return mix(h, v.Uint())
	case reflect.Float32, reflect.Float64:
		return mix(h, math.Float64bits(v.Float()))
	case reflect.Struct:
		for i := range v.NumField() {
			h = c.hashContent(h, v.Field(i))
		}
		return h
	case reflect.Array:
		for i := range v.Len() {
			h = c.hashContent(h, v.Index(i))
		}
		return h
	case reflect.Interface:
		if v.IsNil() {
			return mix(h, 3)
		}
		e := v.Elem()
		return c.hashContent(mix(h, c.plan(e.Type()).id), e)
	case reflect.Slice:
		return mix(mix(h, uint64(v.Pointer())), uint64(v.Len()))
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return mix(h, uint64(v.Pointer()))
	default: // complex
		x := v.Complex()
		return mix(mix(h, math.Float64bits(real(x))), math.Float64bits(imag(x)))
	}
}

// shallowEqual tells whether a and b, of one type, are equal with
// strings and scalars compared by value and references by identity (a
// slice by its first element and length, so a nil and an empty slice
// differ). Floats compare by bits, so -0 and 0 are not merged.
func shallowEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			return true
		}
		if a.IsNil() || b.IsNil() {
			return false
		}
		return contentEqual(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			return bytes.Equal(a.Bytes(), b.Bytes())
		}
		for i := range a.Len() {
			if !contentEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !contentEqual(it.Value(), bv) {
				return false
			}
		}
		return true
	}
	return contentEqual(a, b)
}

// contentEqual compares like hashContent hashes.
func contentEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Complex64, reflect.Complex128:
		x, y := a.Complex(), b.Complex()
		return math.Float64bits(real(x)) == math.Float64bits(real(y)) && math.Float64bits(imag(x)) == math.Float64bits(imag(y))
	case reflect.Struct:
		for i := range a.NumField() {
			if !contentEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !contentEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		ae, be := a.Elem(), b.Elem()
		return ae.Type() == be.Type() && contentEqual(ae, be)
	case reflect.Slice:
		return a.Pointer() == b.Pointer() && a.Len() == b.Len() && a.IsNil() == b.IsNil()
	default: // pointer, map, chan, func, unsafe pointer
		return a.Pointer() == b.Pointer()
	}
}
