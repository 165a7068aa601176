package dra

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// goJSON renders a value of the resource.k8s.io/v1 types as kube-apiserver
// renders the same value of its internal types in error messages (an
// immutable template spec): JSON with the Go field names in declaration
// order, embedded structs flattened, nil pointers, slices and maps as
// null. Values of apimachinery types (quantities, times, raw extensions,
// object metadata) are marshalled as they marshal themselves, as the
// internal types share them.
func goJSON(v any) json.RawMessage {
	var b bytes.Buffer
	writeGo(&b, reflect.ValueOf(v))
	return b.Bytes()
}

func writeGo(b *bytes.Buffer, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("null")
		return
	}
	if t := v.Type(); !strings.HasPrefix(t.PkgPath(), "k8s.io/api/") && t.PkgPath() != "" {
		writeJSON(b, v.Interface())
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		writeGo(b, v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeGo(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k.String())
			b.WriteByte(':')
			writeGo(b, v.MapIndex(k))
		}
		b.WriteByte('}')
	case reflect.Struct:
		b.WriteByte('{')
		writeFields(b, v, true)
		b.WriteByte('}')
	default:
		writeJSON(b, v.Interface())
	}
}

// writeFields writes the fields of struct v (first tells whether no field
// was written yet) and reports whether it still has written none.
func writeFields(b *bytes.Buffer, v reflect.Value, first bool) bool {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && strings.HasPrefix(f.Type.PkgPath(), "k8s.io/api/") {
			first = writeFields(b, v.Field(i), first)
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeJSON(b, f.Name)
		b.WriteByte(':')
		writeGo(b, v.Field(i))
	}
	return first
}

func writeJSON(b *bytes.Buffer, v any) {
	j, err := json.Marshal(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.Write(j)
}
