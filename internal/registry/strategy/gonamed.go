package strategy

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// GoNamed wraps a value that a field error reports as kube-apiserver does
// when the value is of one of its internal (untagged) types: as JSON whose
// keys are the Go field names, in declaration order ({"Type":"X"} rather
// than {"type":"X"}). Pointers and slices that are nil are null; maps are
// not expected in such values; a struct with its own JSON form
// (json.Marshaler: IntOrString, Quantity, Time) is rendered in it.
type GoNamed struct{ V any }

// MarshalJSON renders the wrapped value.
func (g GoNamed) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeGoNamed(&buf, reflect.ValueOf(g.V)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeGoNamed(buf *bytes.Buffer, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Invalid:
		buf.WriteString("null")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return writeGoNamed(buf, v.Elem())
	case reflect.Struct:
		if m, ok := v.Interface().(json.Marshaler); ok {
			// Types with their own JSON form (IntOrString, Quantity,
			// Time) keep it, as encoding/json gives them in Kubernetes.
			b, err := m.MarshalJSON()
			if err != nil {
				return err
			}
			buf.Write(b)
			return nil
		}
		buf.WriteByte('{')
		t := v.Type()
		first := true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			name, _ := json.Marshal(f.Name)
			buf.Write(name)
			buf.WriteByte(':')
			if err := writeGoNamed(buf, v.Field(i)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeGoNamed(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}
