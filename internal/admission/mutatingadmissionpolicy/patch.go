package mutatingadmissionpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/cel/mutation"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// applyConfiguration merges the Object an ApplyConfiguration expression
// returned into obj (a JSON-like map with apiVersion and kind), as
// kube-apiserver: atomic lists, maps and structs may not be set.
func applyConfiguration(tc managedfields.TypeConverter, obj map[string]any, v ref.Val) (map[string]any, error) {
	objVal, ok := v.(*dynamic.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", v.Type())
	}
	if err := objVal.CheckTypeNamesMatchFieldPathNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	m, ok := objVal.Value().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid return type: %T", v)
	}
	if tc == nil {
		return nil, errors.New("error applying patch: type converter must not be nil")
	}
	patch := &unstructured.Unstructured{Object: m}
	live := &unstructured.Unstructured{Object: obj}
	patch.SetGroupVersionKind(live.GroupVersionKind())
	patchTyped, err := tc.ObjectToTyped(patch)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to convert patch object to typed object: %w", err)
	}
	if atomics := findAtomics(nil, patchTyped.Schema(), patchTyped.TypeRef(), patchTyped.AsValue()); len(atomics) > 0 {
		return nil, fmt.Errorf("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
	}
	liveTyped, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to convert original object to typed object: %w", err)
	}
	merged, err := liveTyped.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to merge patch: %w", err)
	}
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, errors.New("error applying patch: failed to convert typed object to object")
	}
	return out, nil
}

// findAtomics lists the paths of atomic lists, maps and structs v sets.
func findAtomics(path []fieldpath.PathElement, s *schema.Schema, tr schema.TypeRef, v value.Value) []string {
	a, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	var out []string
	if v.IsMap() && a.Map != nil {
		if a.Map.ElementRelationship == schema.Atomic {
			out = append(out, pathString(path))
		}
		v.AsMap().Iterate(func(key string, val value.Value) bool {
			if sf, ok := a.Map.FindField(key); ok {
				out = append(out, findAtomics(append(path, fieldpath.PathElement{FieldName: &key}), s, sf.Type, val)...)
			}
			return true
		})
	}
	if v.IsList() && a.List != nil {
		if a.List.ElementRelationship == schema.Atomic {
			out = append(out, pathString(path))
		}
		l := v.AsList()
		for i := 0; i < l.Length(); i++ {
			out = append(out, findAtomics(append(path, fieldpath.PathElement{Index: &i}), s, a.List.ElementType, l.At(i))...)
		}
	}
	return out
}

func pathString(path []fieldpath.PathElement) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString(p.String())
	}
	return b.String()
}

// jsonPatch applies the JSONPatch operations a JSONPatch expression
// returned to obj; a failed test operation leaves obj as it was.
func jsonPatch(obj map[string]any, v ref.Val) (map[string]any, error) {
	list, ok := v.(traits.Lister)
	if !ok {
		return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var ops jsonpatch.Patch
	for it := list.Iterator(); it.HasNext() == celtypes.True; {
		native, err := it.Next().ConvertToNative(reflect.TypeOf(&mutation.JSONPatchVal{}))
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		op, ok := native.(*mutation.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", native)
		}
		o := jsonpatch.Operation{"op": raw(strconv.Quote(op.Op)), "path": raw(strconv.Quote(op.Path))}
		if op.From != "" {
			o["from"] = raw(strconv.Quote(op.From))
		}
		if op.Val != nil {
			if ov, ok := op.Val.(*dynamic.ObjectVal); ok {
				if err := ov.CheckTypeNamesMatchFieldPathNames(); err != nil {
					return nil, fmt.Errorf("type mismatch: %w", err)
				}
			}
			pv, err := op.Val.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			b, err := json.Marshal(pv)
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			o["value"] = raw(string(b))
		}
		ops = append(ops, o)
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to create JSON patch: %w", err)
	}
	patched, err := ops.Apply(doc)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return obj, nil
		}
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(patched, &out); err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	return out, nil
}

func raw(s string) *json.RawMessage {
	r := json.RawMessage(s)
	return &r
}

// applyWith applies an ApplyConfiguration result with tc (nil: the
// resource has no schema).
func applyWith(tc interface{}, obj map[string]any, r policycel.Result) (map[string]any, error) {
	conv, _ := tc.(managedfields.TypeConverter)
	return applyConfiguration(conv, obj, r.Value)
}
