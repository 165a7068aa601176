package objects

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Decode turns a storage value into an object whose resourceVersion is kv's
// ModRevision. A custom object stored at another version is converted by
// the resource's Converter, bounded by convertTimeout (the watch cache
// decodes outside of any request).
func (s *Store) Decode(kv storage.KeyValue) (runtime.Object, error) {
	if s.res.Converter == nil {
		return s.decodeAt(context.Background(), kv.Value, kv.ModRevision)
	}
	ctx, cancel := context.WithTimeout(context.Background(), convertTimeout)
	defer cancel()
	return s.decode(ctx, kv)
}

// decode is Decode within a request: conversion is bounded by ctx.
func (s *Store) decode(ctx context.Context, kv storage.KeyValue) (runtime.Object, error) {
	obj, err := s.decodeAt(ctx, kv.Value, kv.ModRevision)
	if err != nil && s.res.Converter != nil {
		return nil, undecodable(kv, err)
	}
	return obj, err
}

func (s *Store) decodeAt(ctx context.Context, value []byte, rev int64) (runtime.Object, error) {
	var out runtime.Object
	var err error
	switch {
	case s.res.Unstructured:
		obj := s.res.New()
		err = obj.(*unstructured.Unstructured).UnmarshalJSON(value)
		out = obj
		if err == nil && s.res.Converter != nil {
			if out, err = s.convertIn(ctx, obj.(*unstructured.Unstructured)); err != nil {
				return nil, err
			}
		}
		if d, ok := s.res.Strategy.(registry.StoredDefaulter); ok && err == nil {
			d.DefaultStored(out)
		}
	case s.res.View != nil:
		// A view: decode the stored form, then convert it.
		var stored runtime.Object
		if stored, _, err = s.codecs.Proto.Decode(value, nil, s.res.View.New()); err == nil {
			out, err = s.res.View.FromStorage(stored)
		}
	default:
		out, _, err = s.codecs.Proto.Decode(value, nil, s.res.New())
		if d, ok := s.res.Strategy.(registry.StoredDefaulter); ok && err == nil {
			d.DefaultStored(out)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s value: %w", s.res.Resource, err)
	}
	out.GetObjectKind().SetGroupVersionKind(s.gvk)
	if err := setRV(out, rev); err != nil {
		return nil, err
	}
	return out, nil
}

// encode returns the storage value of obj with resourceVersion cleared
// (obj itself is left unchanged): protobuf for typed resources (of the
// stored form, for views of another resource's storage); JSON for custom
// resources, whose apiVersion is then the storage version, as Kubernetes
// stores them.
func (s *Store) encode(ctx context.Context, obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	var buf bytes.Buffer
	if s.res.Unstructured && s.res.Converter != nil {
		var b []byte
		b, err = s.encodeConverted(ctx, obj.(*unstructured.Unstructured))
		buf.Write(b)
	} else if s.res.Unstructured {
		obj.GetObjectKind().SetGroupVersionKind(s.gvk.GroupKind().WithVersion(s.storageVersion()))
		var b []byte
		b, err = obj.(*unstructured.Unstructured).MarshalJSON()
		buf.Write(b)
		obj.GetObjectKind().SetGroupVersionKind(s.gvk)
	} else if v := s.res.View; v != nil {
		var stored runtime.Object
		if stored, err = v.ToStorage(obj); err == nil {
			if sm, merr := meta.Accessor(stored); merr == nil {
				sm.SetResourceVersion("")
			}
			stored.GetObjectKind().SetGroupVersionKind(s.res.StorageGVK())
			err = s.codecs.Proto.Encode(stored, &buf)
		}
	} else {
		obj.GetObjectKind().SetGroupVersionKind(s.gvk)
		err = s.codecs.Proto.Encode(obj, &buf)
	}
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

// storageVersion is the version objects of the resource are stored at.
func (s *Store) storageVersion() string {
	if s.res.StorageVersion != "" {
		return s.res.StorageVersion
	}
	return s.res.Version
}
