package objects

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// convertTimeout bounds a conversion made outside of a request (the watch
// cache's decoding); a request's conversions are bounded by the request.
const convertTimeout = 30 * time.Second

// convertIn converts a custom object read from storage to the store's
// version (no call when it is stored at that version).
func (s *Store) convertIn(ctx context.Context, u *unstructured.Unstructured) (runtime.Object, error) {
	return s.res.Converter.Convert(ctx, u, s.gvk.GroupVersion().String())
}

// encodeConverted converts obj to the storage version and returns its
// JSON; obj is left unchanged.
func (s *Store) encodeConverted(ctx context.Context, obj *unstructured.Unstructured) ([]byte, error) {
	obj.SetGroupVersionKind(s.gvk)
	stored, err := s.res.Converter.Convert(ctx, obj, s.gvk.GroupKind().WithVersion(s.storageVersion()).GroupVersion().String())
	if err != nil {
		return nil, err
	}
	return stored.MarshalJSON()
}

// answer is what a write of obj (stored as value) answers: obj itself, or,
// for a converted resource, the stored value converted back to the store's
// version, as Kubernetes answers with the object it decodes from what it
// wrote. The answer keeps obj's resourceVersion.
func (s *Store) answer(ctx context.Context, value []byte, obj runtime.Object) (runtime.Object, error) {
	if s.res.Converter == nil {
		return obj, nil
	}
	out, err := s.decodeAt(ctx, value, 0)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	accessor(out).SetResourceVersion(m.GetResourceVersion())
	return out, nil
}

// decodeConverted decodes the values of one storage page, converting the
// custom objects among them in one exchange.
func (s *Store) decodeConverted(ctx context.Context, kvs []storage.KeyValue) ([]runtime.Object, error) {
	items := make([]*unstructured.Unstructured, len(kvs))
	first := -1 // the first object to convert, which a failure names
	for i, kv := range kvs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(kv.Value); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if first < 0 && u.GetAPIVersion() != s.gvk.GroupVersion().String() {
			first = i
		}
		items[i] = u
	}
	converted, err := s.res.Converter.ConvertList(ctx, items, s.gvk.GroupVersion().String())
	if err != nil {
		return nil, undecodable(kvs[max(first, 0)], err)
	}
	out := make([]runtime.Object, len(converted))
	d, defaults := s.res.Strategy.(registry.StoredDefaulter)
	for i, u := range converted {
		u.SetGroupVersionKind(s.gvk)
		if defaults {
			d.DefaultStored(u)
		}
		if err := setRV(u, kvs[i].ModRevision); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out[i] = u
	}
	return out, nil
}

// undecodable is kube-apiserver's answer to an object read from storage
// that its conversion webhook failed to convert: a corrupt-object storage
// error naming the key (without the /registry prefix) and the revision,
// as an internal error.
func undecodable(kv storage.KeyValue, err error) error {
	if apierrors.IsTimeout(err) {
		return err // the request's deadline passed: its 504
	}
	msg := err.Error()
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		msg = api.Status().Message
	}
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %s",
		strings.TrimPrefix(kv.Key, "/registry"), kv.ModRevision, msg))
}

// apiError passes API errors (a conversion's) through and makes others an
// internal error.
func apiError(err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	return apierrors.NewInternalError(err)
}
