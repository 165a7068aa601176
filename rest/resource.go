package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Resource is the accessor of one resource (a GroupVersionResource). T is
// the object type and L the list type, both pointers to structs: typed
// kinds such as *corev1.ConfigMap and *corev1.ConfigMapList, or
// *unstructured.Unstructured and *unstructured.UnstructuredList for dynamic
// access. A Resource is immutable and safe for concurrent use; Namespace
// returns a copy bound to a namespace.
type Resource[T, L runtime.Object] struct {
	c          *Client
	gvr        schema.GroupVersionResource
	namespaced bool
	// ns is "" for cluster-scoped resources and for namespaced resources
	// addressed across all namespaces (List, Watch only).
	ns      string
	decoder runtime.Decoder
	// proto is set when the client asks for protobuf and T has a
	// protobuf form: bodies are then sent in protobuf, and protobuf is
	// accepted for objects and watch events. Lists are asked for in
	// protobuf only when L has a protobuf form too (decodeNew checks it),
	// so a list type of the caller's own (an informer's generic list)
	// leaves the watches of T in protobuf. PreferProtobuf sets it too.
	proto bool
	// kind, when set (WithKind), is written as apiVersion and kind into
	// request bodies whose object has none and whose type the client's
	// built-in scheme does not know.
	kind schema.GroupVersionKind
	// newObj and newList make the fresh objects answers are decoded into.
	newObj  func() T
	newList func() L
	// accepts, when set (WithAccept, MetadataOnly), replaces the Accept
	// header of reads and watches; listAccepts, when set, that of List.
	accepts     string
	listAccepts string
}

// For returns the typed accessor of gvr. namespaced says whether the
// resource lives in namespaces; its objects are then addressed through
// Namespace(ns). Example:
//
//	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
//	cm, err := cms.Namespace("default").Get(ctx, "settings", metav1.GetOptions{})
func For[T, L runtime.Object](c *Client, gvr schema.GroupVersionResource, namespaced bool) *Resource[T, L] {
	return ForNew(c, gvr, namespaced, newOf[T], newOf[L])
}

// ForNew is For for object and list types known only at run time: T and
// L may be interfaces (runtime.Object), and newObj and newList return a
// fresh object and list of the concrete types answers are decoded into
// (e.g. func() runtime.Object { return &corev1.Pod{} }). The package
// client builds its accessors with it.
func ForNew[T, L runtime.Object](c *Client, gvr schema.GroupVersionResource, namespaced bool, newObj func() T, newList func() L) *Resource[T, L] {
	var dec runtime.Decoder = c.codecs.JSON
	obj, list := newObj(), newList()
	if _, ok := any(obj).(*unstructured.Unstructured); ok {
		dec = unstructured.UnstructuredJSONScheme
	} else if _, ok := any(list).(*unstructured.UnstructuredList); ok {
		dec = unstructured.UnstructuredJSONScheme
	}
	proto := c.protobuf && protoCapable(c.codecs, obj)
	return &Resource[T, L]{c: c, gvr: gvr, namespaced: namespaced, decoder: dec, proto: proto,
		newObj: newObj, newList: newList}
}

// WithAccept returns a copy of r whose reads and watches send accept as
// their Accept header, in JSON.
func (r *Resource[T, L]) WithAccept(accept string) *Resource[T, L] {
	cp := *r
	cp.accepts, cp.listAccepts, cp.proto, cp.decoder = accept, "", false, r.c.codecs.JSON
	return &cp
}

// PreferProtobuf returns a copy of r that speaks protobuf when the client's
// Config left ContentType unset and T has a protobuf form (built-in kinds),
// as client-go's generated clients do for built-in kinds: requests then
// accept "application/vnd.kubernetes.protobuf, application/json" and
// bodies are sent in protobuf. A ContentType set explicitly, JSON
// included, is kept. Informers use it: decoding protobuf costs a fraction
// of decoding JSON, which dominates a large initial sync.
func (r *Resource[T, L]) PreferProtobuf() *Resource[T, L] {
	cp := *r
	if !r.c.contentTypeSet && r.accepts == "" && protoCapable(r.c.codecs, r.newObj()) {
		cp.proto = true
	}
	return &cp
}

// MetadataOnly returns a copy of r that asks for metadata only, as
// client-go's metadata client does: Get, Patch and Watch ask for
// meta.k8s.io/v1 PartialObjectMetadata (a watch's every event, bookmarks
// included, carries one), List for PartialObjectMetadataList. T and L
// must decode those: *metav1.PartialObjectMetadata and
// *metav1.PartialObjectMetadataList, or unstructured. The metadata types
// are asked for in protobuf first (as client-go does, whatever the
// client's ContentType: a fraction of JSON's decoding cost), with JSON as
// the fallback of servers that do not offer it; unstructured objects,
// which protobuf cannot fill, are asked for in JSON.
func (r *Resource[T, L]) MetadataOnly() *Resource[T, L] {
	cp := *r
	cp.accepts, cp.listAccepts, cp.proto = AcceptPartialObjectMetadata, AcceptPartialObjectMetadataList, false
	if _, ok := any(r.newObj()).(*metav1.PartialObjectMetadata); ok {
		cp.accepts = AcceptPartialObjectMetadataProtobuf
	}
	if _, ok := any(r.newList()).(*metav1.PartialObjectMetadataList); ok {
		cp.listAccepts = AcceptPartialObjectMetadataListProtobuf
	}
	if _, ok := any(r.newObj()).(*unstructured.Unstructured); !ok {
		cp.decoder = r.c.codecs.JSON
	}
	return &cp
}

// AcceptPartialObjectMetadata asks for an object (or each event of a
// watch) as meta.k8s.io/v1 PartialObjectMetadata in JSON: metadata only.
const AcceptPartialObjectMetadata = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// AcceptPartialObjectMetadataList asks for a list as meta.k8s.io/v1
// PartialObjectMetadataList in JSON.
const AcceptPartialObjectMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

// AcceptPartialObjectMetadataProtobuf is AcceptPartialObjectMetadata with
// protobuf first: client-go's metadata client's Accept for Get, Patch and
// Watch.
const AcceptPartialObjectMetadataProtobuf = ContentTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + AcceptPartialObjectMetadata

// AcceptPartialObjectMetadataListProtobuf is
// AcceptPartialObjectMetadataList with protobuf first: client-go's
// metadata client's Accept for List.
const AcceptPartialObjectMetadataListProtobuf = ContentTypeProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," + AcceptPartialObjectMetadataList

// Dynamic returns the accessor of any resource, built-in or custom, whose
// objects are *unstructured.Unstructured.
func Dynamic(c *Client, gvr schema.GroupVersionResource, namespaced bool) *Resource[*unstructured.Unstructured, *unstructured.UnstructuredList] {
	return For[*unstructured.Unstructured, *unstructured.UnstructuredList](c, gvr, namespaced)
}

// Namespace returns a copy of r bound to ns. It has no effect on a
// cluster-scoped resource.
func (r *Resource[T, L]) Namespace(ns string) *Resource[T, L] {
	cp := *r
	if r.namespaced {
		cp.ns = ns
	}
	return &cp
}

// WithKind returns a copy of r that sends gvk as the apiVersion and kind
// of objects that carry none and whose Go type the client's built-in
// scheme does not know: your own types for custom resources, which the
// server refuses without a kind. An object's own TypeMeta always wins.
//
// Deprecated: build the client with a scheme holding your types
// (NewWithScheme, manager.Options.Scheme); it then names their kind.
func (r *Resource[T, L]) WithKind(gvk schema.GroupVersionKind) *Resource[T, L] {
	cp := *r
	cp.kind = gvk
	return &cp
}

// Get reads the named object. A missing object is an error for which
// apierrors.IsNotFound is true.
func (r *Resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	q, err := params(&opts)
	if err != nil {
		return zeroOf[T](), err
	}
	return decodeNew(r, ctx, &request{method: http.MethodGet, path: r.path(name), query: q, name: name,
		accept: r.accepts}, r.newObj)
}

// List reads the collection, honouring every ListOptions field (selectors,
// resourceVersion and its match rule, limit/continue paging, timeoutSeconds).
// An expired continue token yields an error for which apierrors.IsGone is
// true (IsResourceExpired too).
func (r *Resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	opts.Watch = false
	q, err := params(&opts)
	if err != nil {
		return zeroOf[L](), err
	}
	accept := r.accepts
	if r.listAccepts != "" {
		accept = r.listAccepts
	}
	return decodeNew(r, ctx, &request{method: http.MethodGet, path: r.path(""), query: q, accept: accept}, r.newList)
}

// Create posts obj and returns the object as stored. An existing name is
// an error for which apierrors.IsAlreadyExists is true.
func (r *Resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	return r.write(ctx, http.MethodPost, "", "", obj, &opts)
}

// Update replaces the object named by obj. With a resourceVersion set, a
// stale one is an error for which apierrors.IsConflict is true.
func (r *Resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	return r.write(ctx, http.MethodPut, nameOf(obj), "", obj, &opts)
}

// UpdateStatus replaces the status subresource of the object named by obj;
// the server ignores changes outside status.
func (r *Resource[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	return r.write(ctx, http.MethodPut, nameOf(obj), "status", obj, &opts)
}

// UpdateSubresource replaces the named subresource of the object named by
// obj with a PUT, e.g. "finalize" of a namespace (which only accepts
// updates). UpdateStatus is UpdateSubresource(ctx, obj, "status", opts).
func (r *Resource[T, L]) UpdateSubresource(ctx context.Context, obj T, subresource string, opts metav1.UpdateOptions) (T, error) {
	return r.write(ctx, http.MethodPut, nameOf(obj), subresource, obj, &opts)
}

// Patch applies data of the given type (types.JSONPatchType,
// MergePatchType or StrategicMergePatchType) to the named object, or to
// its subresource when one is given ("status").
func (r *Resource[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (T, error) {
	q, err := params(&opts)
	if err != nil {
		return zeroOf[T](), err
	}
	p := r.path(name)
	if len(subresource) > 0 {
		p = path.Join(append([]string{p}, subresource...)...)
	}
	return decodeNew(r, ctx, &request{method: http.MethodPatch, path: p, query: q, body: data,
		contentType: string(pt), accept: r.accept(), name: name}, r.newObj)
}

// Delete removes the named object. opts carries the propagation policy,
// grace period and preconditions (UID, resourceVersion); a failed
// precondition is an error for which apierrors.IsConflict is true.
func (r *Resource[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	body, err := json.Marshal(&opts)
	if err != nil {
		return fmt.Errorf("encode delete options: %w", err)
	}
	return r.discard(ctx, &request{method: http.MethodDelete, path: r.path(name), body: body,
		contentType: "application/json", name: name})
}

// DeleteCollection removes every object matched by listOpts (selectors),
// each deleted with opts.
func (r *Resource[T, L]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	q, err := params(&listOpts)
	if err != nil {
		return err
	}
	body, err := json.Marshal(&opts)
	if err != nil {
		return fmt.Errorf("encode delete options: %w", err)
	}
	return r.discard(ctx, &request{method: http.MethodDelete, path: r.path(""), query: q, body: body,
		contentType: "application/json"})
}

// Watch opens a watch on the collection. See the watch.Interface contract
// in doc.go: events carry T (or *metav1.Status for watch.Error); the result
// channel closes when the stream ends, ctx ends or Stop is called.
func (r *Resource[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	q, err := params(&opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := r.c.do(ctx, &request{method: http.MethodGet, path: r.path(""), query: q, accept: r.accept(),
		gr: r.gvr.GroupResource()})
	if err != nil {
		cancel()
		return nil, err
	}
	ctype := resp.Header.Get("Content-Type")
	proto := isProtobuf(ctype)
	return newStreamWatcher(ctx, cancel, resp.Body, proto, func(raw []byte) (runtime.Object, error) {
		return decodeInto(r.decoderFor(ctype), raw, r.newObj)
	}, func(raw []byte) (*metav1.Status, error) {
		st := &metav1.Status{}
		if err := r.c.decodeStatus(ctype, raw, st); err != nil {
			return nil, err
		}
		return st, nil
	}), nil
}

func (r *Resource[T, L]) write(ctx context.Context, method, name, sub string, obj T, opts runtime.Object) (T, error) {
	q, err := params(opts)
	if err != nil {
		return zeroOf[T](), err
	}
	body, ctype, err := r.encode(obj)
	if err != nil {
		return zeroOf[T](), err
	}
	p := r.path(name)
	if sub != "" {
		p += "/" + sub
	}
	return decodeNew(r, ctx, &request{method: method, path: p, query: q, body: body,
		contentType: ctype, accept: r.accept(), name: name}, r.newObj)
}

// encode marshals obj, in protobuf when the resource uses it, else as JSON,
// with apiVersion and kind set: taken from the object when present, else
// from the scheme (typed kinds), else from WithKind, without mutating the
// caller's object. It returns the body and its Content-Type.
func (r *Resource[T, L]) encode(obj runtime.Object) ([]byte, string, error) {
	var out runtime.Object = obj
	if out.GetObjectKind().GroupVersionKind().Empty() {
		if gvk, ok := r.c.kindOf(obj); ok {
			out = obj.DeepCopyObject()
			out.GetObjectKind().SetGroupVersionKind(gvk)
		} else if !r.kind.Empty() {
			out = obj.DeepCopyObject()
			out.GetObjectKind().SetGroupVersionKind(r.kind)
		}
	}
	if r.proto && protoCapable(r.c.codecs, out) {
		var buf bytes.Buffer
		if err := r.c.codecs.Proto.Encode(out, &buf); err != nil {
			return nil, "", fmt.Errorf("encode %s: %w", r.gvr.Resource, err)
		}
		return buf.Bytes(), ContentTypeProtobuf, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, "", fmt.Errorf("encode %s: %w", r.gvr.Resource, err)
	}
	return b, ContentTypeJSON, nil
}

// accept is the Accept header of the resource's requests: the one set by
// WithAccept or MetadataOnly, else the client's protobuf Accept when the
// resource uses protobuf, else "" (JSON).
func (r *Resource[T, L]) accept() string {
	if r.accepts != "" {
		return r.accepts
	}
	if r.proto {
		return r.protoAccept()
	}
	return ""
}

// protoAccept is the Accept header of a resource that uses protobuf: the
// client's (Config.AcceptContentTypes or its default), or the default when
// protobuf came from PreferProtobuf.
func (r *Resource[T, L]) protoAccept() string {
	if r.c.accept != "" {
		return r.c.accept
	}
	return defaultProtobufAccept
}

// decoderFor is the decoder of a response body with Content-Type ctype.
func (r *Resource[T, L]) decoderFor(ctype string) runtime.Decoder {
	if isProtobuf(ctype) {
		return r.c.codecs.Proto
	}
	return r.decoder
}

// path is the unescaped URL path of the collection (name "") or of one
// object; Client.do escapes it when building the URL.
func (r *Resource[T, L]) path(name string) string {
	p := "/api/" + r.gvr.Version
	if r.gvr.Group != "" {
		p = "/apis/" + r.gvr.Group + "/" + r.gvr.Version
	}
	if r.namespaced && r.ns != "" {
		p += "/namespaces/" + r.ns
	}
	p += "/" + r.gvr.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}

// call runs a non-watch request under the client's Timeout and returns the
// response body and its Content-Type.
func (r *Resource[T, L]) call(ctx context.Context, req *request) ([]byte, string, error) {
	if r.c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.c.timeout)
		defer cancel()
	}
	req.gr = r.gvr.GroupResource()
	resp, err := r.c.do(ctx, req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: read response: %w", req.method, req.path, err)
	}
	return b, resp.Header.Get("Content-Type"), nil
}

func (r *Resource[T, L]) discard(ctx context.Context, req *request) error {
	_, _, err := r.call(ctx, req)
	return err
}

// decodeNew sends req and decodes the answer into mk().
func decodeNew[O runtime.Object, T, L runtime.Object](r *Resource[T, L], ctx context.Context, req *request, mk func() O) (O, error) {
	if req.accept == "" && r.proto && protoCapable(r.c.codecs, mk()) {
		req.accept = r.protoAccept()
	}
	b, ctype, err := r.call(ctx, req)
	if err != nil {
		return zeroOf[O](), err
	}
	out, err := decodeInto(r.decoderFor(ctype), b, mk)
	if err != nil {
		return zeroOf[O](), fmt.Errorf("%s %s: %w", req.method, req.path, err)
	}
	return out, nil
}

// decodeInto decodes raw (JSON or protobuf, as dec reads) into mk().
func decodeInto[O runtime.Object](dec runtime.Decoder, raw []byte, mk func() O) (O, error) {
	into := mk()
	got, gvk, err := dec.Decode(raw, nil, into)
	if err != nil {
		return zeroOf[O](), fmt.Errorf("decode %T: %w", into, err)
	}
	if got != runtime.Object(into) {
		// The answer is of another kind than into's (the decoder made an
		// object of its own): into would be left empty.
		return zeroOf[O](), fmt.Errorf("decode %T: the answer is a %s", into, gvk)
	}
	return into, nil
}

func newOf[O runtime.Object]() O {
	var zero O
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(O)
}

func zeroOf[O any]() O {
	var zero O
	return zero
}

func nameOf(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

// params encodes an options struct (ListOptions, GetOptions, ...) as URL
// query parameters the way the API server expects them.
func params(opts runtime.Object) (url.Values, error) {
	q, err := metav1.ParameterCodec.EncodeParameters(opts, metav1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", opts, err)
	}
	return q, nil
}
