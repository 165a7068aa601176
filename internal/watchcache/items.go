package watchcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Item is one current object of a list read from the cache, with the
// object's encodings as an item of a list response. The encodings are cut
// out of the object's shared watch frames (see "Serialize once" in the
// package comment; each frame locates its list item form when it is
// encoded): an object listed again, or already sent to a watcher, is not
// encoded again.
type Item struct {
	o *object
	c *Cache
}

// Object returns the item's object; it is shared and must not be mutated.
func (it Item) Object() runtime.Object { return it.o.obj }

// ListItems is List returning Items: the current objects that opts
// selects, sorted by storage key, and the cache revision they are current
// to.
func (c *Cache) ListItems(opts ListOptions) ([]Item, int64, error) {
	var out []Item
	rev, err := c.list(opts, func(o *object) { out = append(out, Item{o: o, c: c}) })
	return out, rev, err
}

// list visits, under the read lock, the current objects opts selects.
func (c *Cache) list(opts ListOptions, visit func(*object)) (int64, error) {
	ns := opts.Namespace
	if !c.cfg.Namespaced {
		ns = ""
	}
	f := newFilter(ns, opts.Label, opts.Field)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.readableLocked(); err != nil {
		return 0, err
	}
	c.ascendLocked(f.namespace, func(o *object) bool {
		if f.selects(o) {
			visit(o)
		}
		return true
	})
	return c.rev.Load(), nil
}

// errNoListForm: an object's frame has no list item form.
var errNoListForm = errors.New("watch frame has no list item form")

// ListJSON returns the item's JSON encoding as an item of a list of a
// built-in kind, whose items carry no kind and apiVersion: the encoding is
// '{' followed by the returned bytes. The bytes are shared (do not modify
// them); they are part of the object's JSON watch frame, made on first
// need. It fails for objects whose encoding does not start with their
// kind and apiVersion, as a typed object's does (unstructured objects).
func (it Item) ListJSON() ([]byte, error) {
	return it.listForm(false)
}

// ListProto returns the item's protobuf encoding as an item of a list (the
// object's message, without the runtime.Unknown envelope). The bytes are
// shared (do not modify them); they are part of the object's protobuf
// watch frame, made on first need. It fails when the cache has no
// protobuf encoder.
func (it Item) ListProto() ([]byte, error) {
	return it.listForm(true)
}

// listForm returns the list item form of a watch frame's encoding of the
// object's state: one already made (ADDED or MODIFIED) if there is one,
// else its ADDED frame's, made now and kept with the state for the next
// reader.
func (it Item) listForm(proto bool) ([]byte, error) {
	for _, t := range []watch.EventType{watch.Added, watch.Modified} {
		lf := it.o.frames[frameSlot(t)].Load()
		if lf == nil {
			continue
		}
		e := &lf.json
		if proto {
			e = lf.proto.Load()
		}
		if b, ok := e.readyItem(); ok {
			return b, nil
		}
	}
	lf := it.o.frame(watch.Added, it.c).lf
	e, enc := &lf.json, encodeJSONFrame
	if proto {
		e, enc = lf.protoEncoded(), encodeProtoFrame
	}
	e.make(lf, enc)
	if e.err != nil {
		return nil, e.err
	}
	if e.item == nil {
		return nil, fmt.Errorf("%w: %s", errNoListForm, it.o.key)
	}
	return e.item, nil
}

// jsonListItem returns what follows '{' in the list item form of obj, a
// JSON object starting with prefix (its '{', kind and apiVersion); nil if
// it does not.
func jsonListItem(obj, prefix []byte) []byte {
	if !bytes.HasPrefix(obj, prefix) || len(obj) == len(prefix) {
		return nil
	}
	return obj[len(prefix):]
}

// protoListItem returns the object message inside a protobuf watch frame;
// nil if the frame does not have the expected layout.
func protoListItem(frame []byte) []byte {
	obj, err := protoFrameObject(frame)
	if err != nil {
		return nil
	}
	return obj
}

// typeMeta is the JSON start of an object with one kind and apiVersion.
type typeMeta struct {
	gvk    schema.GroupVersionKind
	prefix []byte
}

// typeMetaCache keeps the JSON start of the last kind asked.
type typeMetaCache struct {
	last atomic.Pointer[typeMeta]
}

// prefix is how the JSON encoding of an object of gvk starts before its
// other fields: '{', then kind and apiVersion when set (the encoding of
// metav1.TypeMeta, inlined first in every typed kind), each followed by a
// comma.
func (c *typeMetaCache) prefix(gvk schema.GroupVersionKind) []byte {
	if tm := c.last.Load(); tm != nil && tm.gvk == gvk {
		return tm.prefix
	}
	prefix := []byte{'{'}
	for _, kv := range [][2]string{{"kind", gvk.Kind}, {"apiVersion", gvk.GroupVersion().String()}} {
		if kv[1] == "" {
			continue
		}
		v, _ := json.Marshal(kv[1]) // a string always encodes
		prefix = append(append(append(prefix, `"`+kv[0]+`":`...), v...), ',')
	}
	c.last.Store(&typeMeta{gvk: gvk, prefix: prefix})
	return prefix
}

// protoFrameObject returns the object message inside a protobuf watch
// frame: the 4-byte length, a metav1.WatchEvent whose object (field 2) is
// a runtime.RawExtension whose raw (field 1) is "k8s\x00" and a
// runtime.Unknown, whose raw (field 2) is the object's message.
func protoFrameObject(frame []byte) ([]byte, error) {
	if len(frame) < 4 {
		return nil, errors.New("short frame")
	}
	ext, err := protoField(frame[4:], 2)
	if err != nil {
		return nil, fmt.Errorf("watch event object: %w", err)
	}
	raw, err := protoField(ext, 1)
	if err != nil {
		return nil, fmt.Errorf("raw extension: %w", err)
	}
	const magic = "k8s\x00"
	if !bytes.HasPrefix(raw, []byte(magic)) {
		return nil, errors.New("no protobuf magic")
	}
	obj, err := protoField(raw[len(magic):], 2)
	if err != nil {
		return nil, fmt.Errorf("unknown: %w", err)
	}
	return obj, nil
}

// protoField returns the bytes of the length-delimited field num of the
// message b; the field must occur exactly once.
func protoField(b []byte, num protowire.Number) ([]byte, error) {
	var found []byte
	seen := false
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			if seen {
				return nil, fmt.Errorf("field %d repeated", num)
			}
			found, seen = v, true
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
	}
	if !seen {
		return nil, fmt.Errorf("no field %d", num)
	}
	return found, nil
}
