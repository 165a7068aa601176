package crdschema

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/equality"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// This file adapts objects and lists of a custom resource to CEL values the
// way Kubernetes' adapter (common.UnstructuredToVal) does, with the same
// answers to every method the interpreter and the libraries call, but
// reading the node's shape from its celSchema, worked out once per schema
// node: Kubernetes' adapter unescapes every field name it is asked for
// with a regular expression and builds a closure per value. Scalars,
// x-kubernetes-int-or-string, preserved unknown values and values of the
// wrong shape (the adapter's errors) are left to Kubernetes' adapter.

// celShape is what the value adapter needs of a schema node.
type celShape struct {
	kind shapeKind

	// Objects: obj is the schema the map is read with (with apiVersion,
	// kind and metadata for an embedded resource), hasProps whether it has
	// properties (field names are then CEL-escaped), props its properties
	// and additional the schema of additional values.
	obj        *celSchema
	hasProps   bool
	mode       objectMode
	props      map[string]propEntry
	additional *celSchema

	// Arrays: the items schema, the list type and, for a map list, its
	// escaped key names.
	items       *celSchema
	listType    string
	escapedKeys []string
}

type shapeKind int

const (
	shapeOther shapeKind = iota // left to Kubernetes' adapter
	shapeObject
	shapeArray
)

// propEntry is a property's schema and its position among the
// properties (where an object keeps the property's adapted value).
type propEntry struct {
	schema *celSchema
	index  int
}

// objectMode is where an object's values take their schema from.
type objectMode int

const (
	objectProperties objectMode = iota
	objectAdditional
	objectEmpty
)

// shape returns the node's shape, worked out on first use.
func (s *celSchema) shape() *celShape {
	s.shapeOnce.Do(func() { s.shapeVal = s.buildShape() })
	return s.shapeVal
}

func (s *celSchema) buildShape() *celShape {
	sh := &celShape{}
	if s.IsXIntOrString() {
		return sh
	}
	switch s.Type() {
	case "object":
		sh.kind, sh.obj = shapeObject, s
		if s.IsXEmbeddedResource() {
			sh.obj = s.WithTypeAndObjectMeta().(*celSchema)
		}
		switch {
		case s.IsXEmbeddedResource() || s.Properties() != nil:
			sh.mode = objectProperties
			sh.props = make(map[string]propEntry, len(sh.obj.Properties()))
			for name, prop := range sh.obj.Properties() {
				sh.props[name] = propEntry{schema: prop.(*celSchema), index: len(sh.props)}
			}
		case s.AdditionalProperties() != nil && s.AdditionalProperties().Schema() != nil:
			sh.mode, sh.additional = objectAdditional, s.AdditionalProperties().Schema().(*celSchema)
		default:
			sh.mode = objectEmpty
		}
		sh.hasProps = sh.obj.Properties() != nil
	case "array":
		if s.Items() == nil {
			return sh
		}
		switch lt := s.XListType(); lt {
		case "", "atomic", "set", "map":
			sh.kind, sh.items, sh.listType = shapeArray, s.Items().(*celSchema), lt
		default:
			return sh // the adapter's error
		}
		if sh.listType == "map" {
			keys := s.XListMapKeys()
			sh.escapedKeys = make([]string, len(keys))
			for i, k := range keys {
				sh.escapedKeys[i] = k
				if escaped, ok := apiservercel.Escape(k); ok {
					sh.escapedKeys[i] = escaped
				}
			}
		}
	}
	return sh
}

// toVal adapts v, a value of the node s, as common.UnstructuredToVal does.
func toVal(v any, s *celSchema) ref.Val {
	sh := s.shape()
	switch sh.kind {
	case shapeObject:
		if m, ok := v.(map[string]any); ok {
			return &objectVal{value: m, shape: sh}
		}
	case shapeArray:
		if l, ok := v.([]any); ok {
			list := listVal{elements: l, schema: s, items: sh.items}
			switch sh.listType {
			case "map":
				return &mapListVal{listVal: list, escapedKeys: sh.escapedKeys}
			case "set":
				return &setListVal{listVal: list}
			}
			return &list
		}
	}
	return common.UnstructuredToVal(v, s)
}

// objectVal is an object: a map whose values take their schema from the
// object's properties or additionalProperties. The values of properties
// are adapted once, on first access, and kept: every rule of a node reads
// the same self, and the value does not change while rules run.
type objectVal struct {
	value map[string]any
	shape *celShape
	props []ref.Val // by propEntry.index; nil until a property is read
}

var _ traits.Mapper = (*objectVal)(nil)

// propSchema is the schema of the value at key, if the key has one.
func (t *objectVal) propSchema(key string) (*celSchema, bool) {
	switch t.shape.mode {
	case objectProperties:
		p, ok := t.shape.props[key]
		return p.schema, ok
	case objectAdditional:
		return t.shape.additional, true
	}
	return nil, false
}

func (t *objectVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if typeDesc.Kind() == reflect.Map {
		return t.value, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%s'", t.Type(), typeDesc)
}

func (t *objectVal) ConvertToType(typeValue ref.Type) ref.Val {
	switch typeValue {
	case types.MapType:
		return t
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", t.Type(), typeValue.TypeName())
}

// Equal compares the values with a schema through the other map's Find,
// and any other value with its raw counterpart.
func (t *objectVal) Equal(other ref.Val) ref.Val {
	oMap, ok := other.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if t.Size() != oMap.Size() {
		return types.False
	}
	for key, value := range t.value {
		if _, ok := t.propSchema(key); !ok {
			oRaw, ok := rawObject(other)
			if !ok {
				return types.MaybeNoSuchOverloadErr(other)
			}
			if oValue, ok := oRaw[key]; ok && !equality.Semantic.DeepEqual(value, oValue) {
				return types.False
			}
			continue
		}
		v, found := t.Find(types.String(key))
		ov, oFound := oMap.Find(types.String(key))
		if found != oFound {
			return types.False
		}
		if !found {
			continue
		}
		if eq := v.Equal(ov); eq != types.True {
			return eq // false or an error
		}
	}
	return types.True
}

// rawObject returns the map an adapted object holds.
func rawObject(v ref.Val) (map[string]any, bool) {
	o, ok := v.(*objectVal)
	if !ok {
		return nil, false
	}
	return o.value, true
}

func (t *objectVal) Type() ref.Type { return types.MapType }

func (t *objectVal) Value() any { return t.value }

func (t *objectVal) Contains(key ref.Val) ref.Val {
	v, found := t.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(found)
}

func (t *objectVal) Get(key ref.Val) ref.Val {
	if v, found := t.Find(key); found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// Iterator ranges over the keys that have a schema, escaped when the
// object has properties. Like Kubernetes' adapter it sizes the key list by
// all keys, so that keys without a schema leave nil entries at its end.
func (t *objectVal) Iterator() traits.Iterator {
	keys := make([]ref.Val, len(t.value))
	i := 0
	for k := range t.value {
		if _, ok := t.propSchema(k); !ok {
			continue
		}
		key := k
		if t.shape.hasProps {
			if escaped, ok := apiservercel.Escape(k); ok {
				key = escaped
			}
		}
		keys[i] = types.String(key)
		i++
	}
	return &valIterator{Val: t, items: keys}
}

func (t *objectVal) Size() ref.Val { return types.Int(len(t.value)) }

// Find returns the value at key (a CEL-escaped field name when the object
// has properties). A null field of an object with properties is absent.
func (t *objectVal) Find(key ref.Val) (ref.Val, bool) {
	keyStr, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(key), true
	}
	k := string(keyStr)
	// An escape sequence has two underscores at each end: a name without
	// "__" unescapes to itself, and no regular expression is needed.
	if t.shape.hasProps && strings.Contains(k, "__") {
		if k, ok = apiservercel.Unescape(k); !ok {
			return nil, false
		}
	}
	v, ok := t.value[k]
	if !ok || (t.shape.hasProps && v == nil) {
		return nil, false
	}
	if t.shape.mode != objectProperties {
		if s, ok := t.propSchema(k); ok {
			return toVal(v, s), true
		}
		return nil, false
	}
	p, ok := t.shape.props[k]
	if !ok {
		return nil, false
	}
	if t.props == nil {
		t.props = make([]ref.Val, len(t.shape.props))
	}
	if t.props[p.index] == nil {
		t.props[p.index] = toVal(v, p.schema)
	}
	return t.props[p.index], true
}

// valIterator ranges over items.
type valIterator struct {
	ref.Val
	items []ref.Val
	next  int
}

func (it *valIterator) HasNext() ref.Val { return types.Bool(it.next < len(it.items)) }

func (it *valIterator) Next() ref.Val {
	v := it.items[it.next]
	it.next++
	return v
}
