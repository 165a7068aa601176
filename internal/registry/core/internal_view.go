package core

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// internalView marshals a value as kube-apiserver's internal types print
// in its messages (the diff of a changed ephemeral container): struct
// fields by their Go names, in declaration order, embedded structs
// flattened, nothing omitted; values with their own JSON form
// (quantities, times) as such.
type internalView struct{ v reflect.Value }

var marshalerType = reflect.TypeFor[json.Marshaler]()

func (iv internalView) MarshalJSON() ([]byte, error) {
	v := iv.v
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return []byte("null"), nil
		}
		v = v.Elem()
	}
	if v.Type().Implements(marshalerType) {
		return v.Interface().(json.Marshaler).MarshalJSON()
	}
	switch v.Kind() {
	case reflect.Struct:
		var buf bytes.Buffer
		buf.WriteByte('{')
		first := true
		if err := writeFields(&buf, v, &first); err != nil {
			return nil, err
		}
		buf.WriteByte('}')
		return buf.Bytes(), nil
	case reflect.Slice:
		if v.IsNil() {
			return []byte("null"), nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return json.Marshal(v.Interface())
		}
		items := make([]internalView, v.Len())
		for i := range items {
			items[i] = internalView{v.Index(i)}
		}
		return json.Marshal(items)
	case reflect.Map:
		if v.IsNil() {
			return []byte("null"), nil
		}
		m := make(map[string]internalView, v.Len())
		for _, k := range v.MapKeys() {
			m[k.String()] = internalView{v.MapIndex(k)}
		}
		return json.Marshal(m)
	}
	return json.Marshal(v.Interface())
}

// writeFields writes v's exported fields, embedded ones flattened.
func writeFields(buf *bytes.Buffer, v reflect.Value, first *bool) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := writeFields(buf, v.Field(i), first); err != nil {
				return err
			}
			continue
		}
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		name, _ := json.Marshal(f.Name)
		buf.Write(name)
		buf.WriteByte(':')
		b, err := internalView{v.Field(i)}.MarshalJSON()
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}
