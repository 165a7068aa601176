package client

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Patch is a patch of an object: its type and its body, computed from the
// object being patched.
type Patch interface {
	Type() types.PatchType
	Data(obj Object) ([]byte, error)
}

// RawPatch is a patch of the given type and body, sent as is (a JSON
// patch, RFC 6902, is RawPatch(types.JSONPatchType, ops)).
func RawPatch(pt types.PatchType, data []byte) Patch { return rawPatch{pt, data} }

type rawPatch struct {
	pt   types.PatchType
	data []byte
}

func (p rawPatch) Type() types.PatchType       { return p.pt }
func (p rawPatch) Data(Object) ([]byte, error) { return p.data, nil }

// MergeFromOption configures MergeFrom and StrategicMergeFrom.
type MergeFromOption interface{ applyToMerge(*mergeOptions) }

type mergeOptions struct{ optimisticLock bool }

// MergeFromWithOptimisticLock makes the patch carry the original's
// resourceVersion, so the server refuses it (409 Conflict) when the object
// changed since.
type MergeFromWithOptimisticLock struct{}

func (MergeFromWithOptimisticLock) applyToMerge(o *mergeOptions) { o.optimisticLock = true }

// MergeFrom is the JSON merge patch (RFC 7386) that turns original into
// the object patched: take a copy, change it, Patch it with
// MergeFrom(original).
func MergeFrom(original Object, opts ...MergeFromOption) Patch {
	return &mergeFrom{pt: types.MergePatchType, original: original, opts: mergeOpts(opts)}
}

// StrategicMergeFrom is MergeFrom as a strategic merge patch (built-in
// kinds only: it follows their patch strategies, merging lists by key).
func StrategicMergeFrom(original Object, opts ...MergeFromOption) Patch {
	return &mergeFrom{pt: types.StrategicMergePatchType, original: original, opts: mergeOpts(opts)}
}

func mergeOpts(opts []MergeFromOption) mergeOptions {
	var o mergeOptions
	for _, opt := range opts {
		opt.applyToMerge(&o)
	}
	return o
}

type mergeFrom struct {
	pt       types.PatchType
	original Object
	opts     mergeOptions
}

func (p *mergeFrom) Type() types.PatchType { return p.pt }

func (p *mergeFrom) Data(obj Object) ([]byte, error) {
	orig, err := json.Marshal(p.original)
	if err != nil {
		return nil, fmt.Errorf("encode the original: %w", err)
	}
	mod, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode the patched object: %w", err)
	}
	var data []byte
	if p.pt == types.StrategicMergePatchType {
		data, err = strategicpatch.CreateTwoWayMergePatch(orig, mod, obj)
	} else {
		data, err = jsonpatch.CreateMergePatch(orig, mod)
	}
	if err != nil {
		return nil, fmt.Errorf("compute the %s patch: %w", p.pt, err)
	}
	if !p.opts.optimisticLock {
		return data, nil
	}
	acc, err := meta.Accessor(p.original)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode the patch: %w", err)
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = acc.GetResourceVersion()
	m["metadata"] = md
	return json.Marshal(m)
}

// Apply is a server-side apply patch: obj holds the fields its manager
// (FieldOwner, required) wants set; give ForceOwnership to take fields
// other managers own. obj must carry apiVersion and kind (the client sets
// them from the scheme when missing).
var Apply Patch = applyPatch{}

type applyPatch struct{}

func (applyPatch) Type() types.PatchType { return types.ApplyPatchType }
func (applyPatch) Data(obj Object) ([]byte, error) {
	return json.Marshal(obj)
}
