package crdschema

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apiserver/pkg/cel/common"
)

// This file adapts arrays as Kubernetes' adapter does (see celvalues.go):
// atomic lists, and set and map lists, whose equality ignores order and
// whose concatenation merges.

// listVal is an array (x-kubernetes-list-type atomic or unset). Its
// elements are adapted once, on first access, and kept.
type listVal struct {
	elements []any
	// schema is the array's schema, items that of its elements.
	schema, items *celSchema
	adapted       []ref.Val
}

// elem is element i adapted.
func (t *listVal) elem(i int) ref.Val {
	if t.adapted == nil {
		t.adapted = make([]ref.Val, len(t.elements))
	}
	if t.adapted[i] == nil {
		t.adapted[i] = toVal(t.elements[i], t.items)
	}
	return t.adapted[i]
}

// all is every element adapted.
func (t *listVal) all() []ref.Val {
	for i := range t.elements {
		t.elem(i)
	}
	return t.adapted
}

var _ traits.Lister = (*listVal)(nil)

// ConvertToNative converts to a slice; the elements of a list of strings
// become a []string (Kubernetes' workaround for cel-go's conversion).
func (t *listVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if typeDesc.Kind() != reflect.Slice {
		return nil, fmt.Errorf("type conversion error from '%s' to '%s'", t.Type(), typeDesc)
	}
	if t.items.Type() != "string" {
		return t.elements, nil
	}
	var out []string
	for _, e := range t.elements {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("expected all elements to be of type string, but got %T", e)
		}
		out = append(out, s)
	}
	return out, nil
}

func (t *listVal) ConvertToType(typeValue ref.Type) ref.Val {
	switch typeValue {
	case types.ListType:
		return t
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", t.Type(), typeValue.TypeName())
}

// Equal compares element by element, in order.
func (t *listVal) Equal(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	n := types.Int(len(t.elements))
	if n != oList.Size() {
		return types.False
	}
	for i := types.Int(0); i < n; i++ {
		if eq := t.Get(i).Equal(oList.Get(i)); eq != types.True {
			return eq // false or an error
		}
	}
	return types.True
}

func (t *listVal) Type() ref.Type { return types.ListType }

func (t *listVal) Value() any { return t.elements }

// Add concatenates: the elements, then other's.
func (t *listVal) Add(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	oSize, _ := oList.Size().(types.Int)
	out := make([]ref.Val, 0, len(t.elements)+int(oSize))
	out = append(out, t.all()...)
	for it := oList.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, out)
}

// Contains reports whether an element equals val; an element that cannot
// be compared makes it an error unless another one is equal.
func (t *listVal) Contains(val ref.Val) ref.Val {
	if types.IsUnknownOrError(val) {
		return val
	}
	var err ref.Val
	for i := range t.elements {
		cmp := t.elem(i).Equal(val)
		b, ok := cmp.(types.Bool)
		if !ok && err == nil {
			err = types.MaybeNoSuchOverloadErr(cmp)
		}
		if b == types.True {
			return types.True
		}
	}
	if err != nil {
		return err
	}
	return types.False
}

func (t *listVal) Get(idx ref.Val) ref.Val {
	iv, ok := idx.(types.Int)
	if !ok {
		return types.ValOrErr(idx, "unsupported index: %v", idx)
	}
	i := int(iv)
	if i < 0 || i >= len(t.elements) {
		return types.NewErr("index out of bounds: %v", idx)
	}
	return t.elem(i)
}

func (t *listVal) Iterator() traits.Iterator {
	return &valIterator{Val: t, items: t.all()}
}

func (t *listVal) Size() ref.Val { return types.Int(len(t.elements)) }

// kubeList is the list as Kubernetes' adapter builds it, for the
// operations of set and map lists left to it.
func (t *listVal) kubeList() ref.Val { return common.UnstructuredToVal(t.elements, t.schema) }

// setListVal is an array with x-kubernetes-list-type set. Its equality
// (order ignored) and concatenation (a union) are Kubernetes' adapter's,
// on the list as that adapter builds it: set elements are scalars, which
// both adapters adapt alike, so no value of Kubernetes' adapter meets one
// of ours.
type setListVal struct {
	listVal
}

func (t *setListVal) Equal(other ref.Val) ref.Val { return t.kubeList().Equal(other) }

func (t *setListVal) Add(other ref.Val) ref.Val { return t.kubeList().(traits.Adder).Add(other) }

// mapListVal is an array with x-kubernetes-list-type map: elements are
// identified by their key fields.
type mapListVal struct {
	listVal
	escapedKeys []string
}

// key is a comparable Go value identifying element, as Kubernetes'
// adapter builds it (up to three key fields in an array, more printed).
func (t *mapListVal) key(element any) any {
	obj, ok := element.(map[string]any)
	if !ok {
		return types.NewErr("unexpected data format for element of array with x-kubernetes-list-type=map: %T", element)
	}
	switch len(t.escapedKeys) {
	case 1:
		return obj[t.escapedKeys[0]]
	case 2:
		return [2]any{obj[t.escapedKeys[0]], obj[t.escapedKeys[1]]}
	case 3:
		return [3]any{obj[t.escapedKeys[0]], obj[t.escapedKeys[1]], obj[t.escapedKeys[2]]}
	}
	key := make([]any, len(t.escapedKeys))
	for i, k := range t.escapedKeys {
		key[i] = obj[k]
	}
	return fmt.Sprintf("%#v", key)
}

// Equal matches elements by key, ignoring order.
func (t *mapListVal) Equal(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if types.Int(len(t.elements)) != oList.Size() {
		return types.False
	}
	byKey := make(map[any]any, len(t.elements))
	for _, e := range t.elements {
		byKey[t.key(e)] = e
	}
	seen := make(map[any]struct{}, len(byKey))
	for it := oList.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k := t.key(v.Value())
		e, ok := byKey[k]
		if !ok {
			return types.False
		}
		if eq := toVal(e, t.items).Equal(v); eq != types.True {
			return eq // false or an error
		}
		seen[k] = struct{}{}
	}
	return types.Bool(len(seen) == len(byKey))
}

// Add merges: the elements of other replace those with the same key in
// place, the others are appended in their order.
func (t *mapListVal) Add(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return mergeMapList(append([]ref.Val(nil), t.all()...), oList, t.escapedKeys)
}

// mergeMapList merges other into elements (which it may change) by the
// keys escapedKeys name.
func mergeMapList(elements []ref.Val, other traits.Lister, escapedKeys []string) ref.Val {
	at := make(map[any]int, len(elements))
	for i, e := range elements {
		at[adaptedMapKey(e, escapedKeys)] = i
	}
	for it := other.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		if i, ok := at[adaptedMapKey(v, escapedKeys)]; ok {
			elements[i] = v
		} else {
			elements = append(elements, v)
		}
	}
	return &mergedMapList{Lister: types.NewRefValList(types.DefaultTypeAdapter, elements), escapedKeys: escapedKeys}
}

// adaptedMapKey is a comparable Go value identifying an adapted element of
// a map list by its key fields, as Kubernetes' adapter builds it: a missing
// or erroneous field is nil, a value Go cannot compare is printed.
func adaptedMapKey(element ref.Val, escapedKeys []string) any {
	field := func(name string) any {
		key := types.String(name)
		var v ref.Val
		var found bool
		switch e := element.(type) {
		case traits.Mapper:
			v, found = e.Find(key)
		case traits.Indexer:
			if tester, ok := element.(traits.FieldTester); ok {
				found = tester.IsSet(key) == types.True
			}
			if found {
				v = e.Get(key)
			}
		}
		if !found || v == nil || types.IsUnknownOrError(v) {
			return nil
		}
		raw := v.Value()
		if raw != nil && !reflect.TypeOf(raw).Comparable() {
			return fmt.Sprintf("%#v", raw)
		}
		return raw
	}
	switch len(escapedKeys) {
	case 1:
		return field(escapedKeys[0])
	case 2:
		return [2]any{field(escapedKeys[0]), field(escapedKeys[1])}
	case 3:
		return [3]any{field(escapedKeys[0]), field(escapedKeys[1]), field(escapedKeys[2])}
	}
	key := make([]any, len(escapedKeys))
	for i, k := range escapedKeys {
		key[i] = field(k)
	}
	return fmt.Sprintf("%#v", key)
}

// mergedMapList is the result of adding to a map list: still a map list
// (its equality ignores order, adding to it merges).
type mergedMapList struct {
	traits.Lister
	escapedKeys []string
}

func (l *mergedMapList) elements() []ref.Val {
	n, _ := l.Size().(types.Int)
	out := make([]ref.Val, int(n))
	for i := range n {
		out[i] = l.Get(i)
	}
	return out
}

func (l *mergedMapList) Add(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return mergeMapList(l.elements(), oList, l.escapedKeys)
}

// Equal matches elements by key, ignoring order.
func (l *mergedMapList) Equal(other ref.Val) ref.Val {
	oList, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	elements := l.elements()
	if types.Int(len(elements)) != oList.Size() {
		return types.False
	}
	byKey := make(map[any]ref.Val, len(elements))
	for _, e := range elements {
		byKey[adaptedMapKey(e, l.escapedKeys)] = e
	}
	seen := make(map[any]struct{}, len(byKey))
	for it := oList.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k := adaptedMapKey(v, l.escapedKeys)
		e, ok := byKey[k]
		if !ok {
			return types.False
		}
		if eq := e.Equal(v); eq != types.True {
			return eq // false or an error
		}
		seen[k] = struct{}{}
	}
	return types.Bool(len(seen) == len(byKey))
}
