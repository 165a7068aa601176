package webhook

import (
	"bytes"
	"encoding/json"
)

// unmarshalPreserveInts decodes JSON keeping integers as int64 (CEL's
// and the unstructured converter's view of numbers).
func unmarshalPreserveInts(b []byte, into *map[string]any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return err
	}
	*into = convertNumbers(m).(map[string]any)
	return nil
}

func convertNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = convertNumbers(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = convertNumbers(e)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}
