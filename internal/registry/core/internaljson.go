package core

import (
	"bytes"
	"encoding/json"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/diff"
)

// internalDiff is the diff kube-apiserver puts in the messages of
// immutable-spec errors: a unified diff of the JSON of its internal types,
// which have no JSON tags. internalForm renders a core/v1 value that way:
// Go field names, fields in declaration order (embedded structs inlined),
// nothing omitted.
func internalDiff(old, updated any) string {
	return diff.Diff(internalForm(reflect.ValueOf(old)), internalForm(reflect.ValueOf(updated)))
}

// internalValue is v as kube-apiserver shows it as the bad value of a
// field error, when that value is one of its internal structs: in
// internalForm.
func internalValue(v any) any { return internalForm(reflect.ValueOf(v)) }

var coreV1Path = reflect.TypeOf(corev1.Pod{}).PkgPath()

// orderedObject marshals as a JSON object with its keys in order.
type orderedObject []orderedField

type orderedField struct {
	name  string
	value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func internalForm(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Invalid:
		return nil
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return internalForm(v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() != coreV1Path {
			return v.Interface() // metav1 and resource types marshal themselves
		}
		return structForm(v, nil)
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = internalForm(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = internalForm(it.Value())
		}
		return out
	}
	return v.Interface()
}

// structForm appends the fields of struct v to into, inlining embedded
// structs as encoding/json does with untagged ones.
func structForm(v reflect.Value, into orderedObject) orderedObject {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			into = structForm(v.Field(i), into)
			continue
		}
		into = append(into, orderedField{f.Name, internalForm(v.Field(i))})
	}
	if into == nil {
		into = orderedObject{}
	}
	return into
}
