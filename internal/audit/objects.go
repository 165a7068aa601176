package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Encoder renders an object as JSON with its apiVersion and kind, as the
// server sends it.
type Encoder func(runtime.Object) ([]byte, error)

// config returns the request's level and whether to drop managedFields;
// LevelNone when the request is not audited.
func config(ctx context.Context) (Level, bool) {
	r := from(ctx)
	if r == nil {
		return LevelNone, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.initialized {
		return LevelNone, false
	}
	return r.cfg.Level, r.cfg.OmitManagedFields
}

// LogRequestObject records the decoded body of a create, an update or a
// delete (its DeleteOptions): at Metadata level and up, the object
// reference gains what the body names and the path did not (name,
// namespace, uid, resourceVersion); at Request level and up, the body
// itself, as JSON in the request's version.
func LogRequestObject(ctx context.Context, obj runtime.Object, gvr schema.GroupVersionResource, subresource string, enc Encoder) {
	level, omf := config(ctx)
	if level.Less(LevelMetadata) {
		return
	}
	var body []byte
	if !level.Less(LevelRequest) {
		body = encodeBody(ctx, obj, omf, enc)
	}
	m, _ := meta.Accessor(obj)
	visit(ctx, func(_ *request, ev *Event) {
		if ev.ObjectRef == nil {
			ev.ObjectRef = &ObjectReference{}
		}
		ref := ev.ObjectRef
		if m != nil {
			fill(&ref.Namespace, m.GetNamespace())
			fill(&ref.Name, m.GetName())
			fill(&ref.UID, string(m.GetUID()))
			fill(&ref.ResourceVersion, m.GetResourceVersion())
		}
		if ref.APIVersion == "" {
			ref.APIGroup, ref.APIVersion = gvr.Group, gvr.Version
		}
		fill(&ref.Resource, gvr.Resource)
		fill(&ref.Subresource, subresource)
		ev.RequestObject = rawJSON(body)
	})
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// LogRequestPatch records a patch body (Request level and up) as JSON; a
// YAML apply patch is converted.
func LogRequestPatch(ctx context.Context, patch []byte) {
	level, _ := config(ctx)
	if level.Less(LevelRequest) {
		return
	}
	body := patch
	if !json.Valid(body) {
		j, err := yaml.YAMLToJSON(patch)
		if err != nil {
			return
		}
		body = j
	}
	visit(ctx, func(_ *request, ev *Event) { ev.RequestObject = rawJSON(compact(body)) })
}

// RecordsResponseObject reports whether LogResponseObject records the
// object of the request's answer (RequestResponse level), so a handler
// that writes an answer without building it as one object knows when it
// must.
func RecordsResponseObject(ctx context.Context) bool {
	level, _ := config(ctx)
	return !level.Less(LevelRequestResponse)
}

// LogResponseObject records the object of an answer: a Status's status,
// message, reason and details at Metadata level and up; the object itself
// at RequestResponse.
func LogResponseObject(ctx context.Context, obj runtime.Object, enc Encoder) {
	level, omf := config(ctx)
	if level.Less(LevelMetadata) {
		return
	}
	var body []byte
	if !level.Less(LevelRequestResponse) {
		body = encodeBody(ctx, obj, omf, enc)
	}
	st, _ := obj.(*metav1.Status)
	visit(ctx, func(_ *request, ev *Event) {
		if st != nil {
			code := st.Code
			if ev.ResponseStatus != nil && ev.ResponseStatus.Code != 0 {
				code = ev.ResponseStatus.Code
			}
			ev.ResponseStatus = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: code}
		}
		ev.ResponseObject = rawJSON(body)
	})
}

// encodeBody renders obj for the event, without managedFields when the
// policy says so.
func encodeBody(ctx context.Context, obj runtime.Object, omitManagedFields bool, enc Encoder) []byte {
	if omitManagedFields {
		obj = withoutManagedFields(obj)
	}
	b, err := enc(obj)
	if err != nil {
		slog.Error("encoding an object for the audit log", "auditID", IDFrom(ctx), "err", err)
		return nil
	}
	return compact(b)
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return nil
	}
	return buf.Bytes()
}

// withoutManagedFields returns a copy of an object, a list or a Table
// without metadata.managedFields; anything else as it is.
func withoutManagedFields(obj runtime.Object) runtime.Object {
	_, isObj := meta.Accessor(obj)
	isList := meta.IsListType(obj)
	_, isTable := obj.(*metav1.Table)
	if isObj != nil && !isList && !isTable {
		return obj
	}
	out := obj.DeepCopyObject()
	clear := func(o runtime.Object) error {
		if o == nil {
			return nil
		}
		if m, err := meta.Accessor(o); err == nil {
			m.SetManagedFields(nil)
		}
		return nil
	}
	_ = clear(out)
	if isList {
		_ = meta.EachListItem(out, clear)
	}
	if t, ok := out.(*metav1.Table); ok {
		for i := range t.Rows {
			_ = clear(t.Rows[i].Object.Object)
		}
	}
	return out
}
