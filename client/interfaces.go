package client

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is an API object: a pointer to a typed kind (*corev1.Pod, your
// own custom resource type), *unstructured.Unstructured or
// *metav1.PartialObjectMetadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of API objects: *corev1.PodList,
// *unstructured.UnstructuredList, *metav1.PartialObjectMetadataList.
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// ObjectKey names an object: its namespace ("" for cluster-scoped kinds)
// and name.
type ObjectKey = types.NamespacedName

// ObjectKeyFromObject returns the key of obj.
func ObjectKeyFromObject(obj Object) ObjectKey {
	return ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Reader reads objects. The Client's reads come from the cache: Get and
// List fill obj or list with deep copies of cached objects (unless
// UnsafeDisableDeepCopy is given), and a missing object is an error for
// which apierrors.IsNotFound holds.
type Reader interface {
	Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error
	List(ctx context.Context, list ObjectList, opts ...ListOption) error
}

// Writer writes objects to the server. Each call updates obj with the
// object the server answered (resourceVersion, defaults, status).
type Writer interface {
	Create(ctx context.Context, obj Object, opts ...CreateOption) error
	Update(ctx context.Context, obj Object, opts ...UpdateOption) error
	Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error
	Delete(ctx context.Context, obj Object, opts ...DeleteOption) error
	DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error
}

// SubResourceWriter writes a subresource (status, scale, eviction) of an
// object.
type SubResourceWriter interface {
	// Create posts subResource to obj's subresource (an Eviction to
	// pods/eviction) and decodes the answer into subResource.
	Create(ctx context.Context, obj Object, subResource Object, opts ...SubResourceCreateOption) error
	// Update puts obj (or SubResourceBody) to obj's subresource and
	// decodes the answer into obj (the body).
	Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error
	// Patch patches obj's subresource and decodes the answer into obj.
	Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error
}

// SubResourceClient reads and writes one subresource; its reads go to the
// server (subresources are not cached).
type SubResourceClient interface {
	SubResourceWriter
	// Get reads obj's subresource into subResource (the Scale of a
	// Deployment).
	Get(ctx context.Context, obj Object, subResource Object, opts ...SubResourceGetOption) error
}

// Client reads from the cache and writes to the server, for every Go type
// of its scheme. A reconciler needs nothing else.
type Client interface {
	Reader
	Writer
	// Status is the writer of the status subresource: Update and Patch
	// change status only (the server ignores the rest).
	Status() SubResourceWriter
	// SubResource is the client of any named subresource.
	SubResource(subResource string) SubResourceClient
	// Scheme maps Go types to kinds.
	Scheme() *runtime.Scheme
	// GroupVersionKindFor returns the kind of obj.
	GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error)
	// IsObjectNamespaced tells whether obj's kind lives in namespaces.
	IsObjectNamespaced(obj runtime.Object) (bool, error)
}

// IndexerFunc returns the values of one field of obj for a field index.
type IndexerFunc func(obj Object) []string

// FieldIndexer registers field indexes, by which List selects with
// MatchingFields.
type FieldIndexer interface {
	// IndexField indexes obj's kind by field (a name of your choice, e.g.
	// "spec.nodeName"); List(..., MatchingFields{field: v}) then returns
	// the objects for which extract returned v. It starts no informer.
	IndexField(ctx context.Context, obj Object, field string, extract IndexerFunc) error
}

// Mapping is where a kind lives on the server.
type Mapping struct {
	GVR        schema.GroupVersionResource
	Namespaced bool
}

// RESTMapper maps kinds to resources (through discovery).
type RESTMapper interface {
	RESTMapping(ctx context.Context, gvk schema.GroupVersionKind) (Mapping, error)
}
