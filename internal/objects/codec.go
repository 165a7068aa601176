package objects

import (
	"bytes"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Decode turns a storage value into an object whose resourceVersion is kv's
// ModRevision.
func (s *Store) Decode(kv storage.KeyValue) (runtime.Object, error) {
	return s.decodeAt(kv.Value, kv.ModRevision)
}

func (s *Store) decodeAt(value []byte, rev int64) (runtime.Object, error) {
	obj := s.res.New()
	out, _, err := s.codecs.Proto.Decode(value, nil, obj)
	if err != nil {
		return nil, fmt.Errorf("decode %s value: %w", s.res.Resource, err)
	}
	out.GetObjectKind().SetGroupVersionKind(s.gvk)
	if err := setRV(out, rev); err != nil {
		return nil, err
	}
	return out, nil
}

// encode returns the storage value of obj: protobuf with resourceVersion
// cleared (obj itself is left unchanged).
func (s *Store) encode(obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	obj.GetObjectKind().SetGroupVersionKind(s.gvk)
	var buf bytes.Buffer
	err = s.codecs.Proto.Encode(obj, &buf)
	m.SetResourceVersion(rv)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", s.res.Resource, err)
	}
	return buf.Bytes(), nil
}

func setRV(obj runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	return nil
}

// ParseResourceVersion parses a non-empty resourceVersion; ok is false for
// anything that is not a non-negative integer.
func ParseResourceVersion(rv string) (int64, bool) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
