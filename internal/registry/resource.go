package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Strategy is the per-kind write logic. obj and old are of the Resource's
// Go type (for example *corev1.Pod).
type Strategy interface {
	// PrepareForCreate resets fields a client may not set on create (for
	// most kinds: status).
	PrepareForCreate(obj runtime.Object)
	// PrepareForUpdate carries over from old what a main-resource update may
	// not change (status, for kinds with a status subresource).
	PrepareForUpdate(obj, old runtime.Object)
	// Default fills defaults, as Kubernetes' defaulting functions do for the
	// fields controllers rely on. Called after decoding on every write.
	Default(obj runtime.Object)
	// Validate checks a new object.
	Validate(obj runtime.Object) field.ErrorList
	// ValidateUpdate checks an update (immutable fields and the rest).
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// StatusStrategy is the write logic of the status subresource.
type StatusStrategy interface {
	// PrepareForUpdate keeps everything of old but status (and metadata
	// that the status endpoint may change: labels, annotations are taken
	// from old too, as Kubernetes does).
	PrepareForUpdate(obj, old runtime.Object)
	// ValidateUpdate checks the new status.
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// AttrFunc returns the labels and the selectable fields of an object. The
// field set must contain metadata.name and, for namespaced kinds,
// metadata.namespace, plus any kind-specific fields (spec.nodeName and
// status.phase for pods, ...).
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// TableConvertor renders objects as the rows of a meta.k8s.io/v1 Table, so
// that `kubectl get` shows the usual columns.
type TableConvertor interface {
	// Columns returns the column definitions. Columns with Priority > 0 are
	// shown by `kubectl get -o wide` only.
	Columns() []metav1.TableColumnDefinition
	// Cells returns the cells of one row, one per column, for obj.
	Cells(obj runtime.Object) ([]interface{}, error)
}

// ScaleAccessor reads and writes the replica counts behind the scale
// subresource (autoscaling/v1 Scale).
type ScaleAccessor interface {
	// Replicas returns spec.replicas (defaulted), status.replicas and the
	// status selector as a label-selector string (e.g. "app=web").
	Replicas(obj runtime.Object) (spec, status int32, selector string, err error)
	// SetReplicas sets spec.replicas on obj.
	SetReplicas(obj runtime.Object, replicas int32) error
}

// Resource describes one served resource.
type Resource struct {
	// GroupVersion and Resource (the lower-case plural, e.g. "deployments").
	Group, Version, Resource string
	// Kind and ListKind, e.g. "Deployment" and "DeploymentList".
	Kind, ListKind string
	// Singular name, e.g. "deployment".
	Singular string
	// ShortNames ("deploy") and Categories ("all").
	ShortNames, Categories []string
	// Namespaced is false for cluster-scoped kinds (nodes, namespaces).
	Namespaced bool
	// New returns a new empty object of the Go type, NewList its list.
	New     func() runtime.Object
	NewList func() runtime.Object

	Strategy Strategy
	// Status is nil when the kind has no status subresource.
	Status StatusStrategy
	// Finalize is the strategy of the finalize subresource (namespaces:
	// it changes spec.finalizers only); nil for other kinds.
	Finalize StatusStrategy
	// Scale is nil for kinds without a scale subresource.
	Scale ScaleAccessor
	// Binding is true for pods (pods/binding).
	Binding bool
	// NoDeleteCollection is true for kinds kube-apiserver serves no
	// deletecollection for (namespaces: DELETE on the collection is 405).
	NoDeleteCollection bool
	// NoGeneration is true for kinds whose Kubernetes strategy keeps no
	// metadata.generation (configmaps, secrets, services, namespaces,
	// nodes, events, leases): it stays unset instead of 1, +1 per spec
	// change.
	NoGeneration bool
	// Unstructured is true for custom resources: New and NewList return
	// *unstructured.Unstructured and *unstructured.UnstructuredList, objects
	// are stored as JSON, and the wire forms are JSON and YAML only (no
	// protobuf, no strategic merge patch), as Kubernetes serves them.
	Unstructured bool
	// Schema is the OpenAPI v3 schema of an Unstructured resource's kind,
	// with refs of the form "#/components/schemas/<model>" (ObjectMeta is
	// io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta); ModelName is the
	// model it is published under (Kubernetes' reversed-group form, e.g.
	// "com.example.stable.v1.CronTab"). Both are unset for typed
	// resources, whose schemas come from their Go types. Shared: never
	// modified after the Resource is built.
	Schema    *spec.Schema
	ModelName string
	// StorageVersion is the version objects are stored at when it is not
	// Version (a custom resource served at several versions); empty means
	// Version. Versions of one group/resource share one storage prefix.
	StorageVersion string
	// Attrs extracts labels and selectable fields.
	Attrs AttrFunc
	// Table renders `kubectl get` columns.
	Table TableConvertor
}

// GroupVersion returns the resource's group/version.
func (r *Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GVR returns the resource's group/version/resource.
func (r *Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// GVK returns the resource's group/version/kind.
func (r *Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// KeyPrefix returns the storage prefix of all objects of the resource,
// ending in "/". Keys are "/registry/<group>/<resource>/<namespace>/<name>"
// (core group: "core"; cluster-scoped kinds have no namespace segment).
func (r *Resource) KeyPrefix() string {
	g := r.Group
	if g == "" {
		g = "core"
	}
	return "/registry/" + g + "/" + r.Resource + "/"
}

// Key returns the storage key of one object.
func (r *Resource) Key(namespace, name string) string {
	if r.Namespaced {
		return r.KeyPrefix() + namespace + "/" + name
	}
	return r.KeyPrefix() + name
}

// NamespacePrefix returns the storage prefix of the objects in one
// namespace (for namespaced kinds), ending in "/".
func (r *Resource) NamespacePrefix(namespace string) string {
	return r.KeyPrefix() + namespace + "/"
}

// Verbs lists the verbs discovery advertises for the main resource.
func (r *Resource) Verbs() []string {
	if r.NoDeleteCollection {
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// GracefulDeleteStrategy is implemented by strategies of kinds whose
// deletion can be graceful (pods). Kinds without it are deleted at once
// unless finalizers hold them.
type GracefulDeleteStrategy interface {
	// GracePeriod returns the grace period to apply to deleting obj, given
	// the client's request (nil when the client named none). A zero result
	// deletes at once.
	GracePeriod(obj runtime.Object, requested *int64) int64
}

// CreateOnUpdateStrategy is implemented by strategies of kinds that a PUT
// may create (events), as Kubernetes' AllowCreateOnUpdate.
type CreateOnUpdateStrategy interface {
	AllowCreateOnUpdate() bool
}

// DeletionHolder is implemented by strategies of kinds that something
// besides metadata.finalizers can keep from being removed (namespaces:
// spec.finalizers).
type DeletionHolder interface {
	// PrepareForDelete updates obj when its deletion begins (a namespace
	// turns Terminating).
	PrepareForDelete(obj runtime.Object)
	// HoldsDeletion reports whether obj must stay until something else
	// (a controller) releases it.
	HoldsDeletion(obj runtime.Object) bool
}

// Pruner is implemented by strategies of kinds whose decoded objects may
// carry fields the schema does not know (custom resources): Prune drops
// them in place and returns their paths ("spec.foo"), which the server
// reports as unknown fields (an error under fieldValidation=Strict, a
// warning under Warn).
type Pruner interface {
	Prune(obj runtime.Object) []string
}

// ContextValidator is implemented by strategies (and status strategies)
// whose validation needs the request's context: custom resources evaluate
// CEL validation rules, which stop when the request is cancelled and
// report ratcheted failures as warnings through the context
// (k8s.io/apiserver/pkg/warning). The object layer calls these instead of
// Validate and ValidateUpdate when a strategy has them.
type ContextValidator interface {
	ContextUpdateValidator
	ValidateContext(ctx context.Context, obj runtime.Object) field.ErrorList
}

// ContextUpdateValidator is the update half of ContextValidator, which is
// all a status strategy needs.
type ContextUpdateValidator interface {
	ValidateUpdateContext(ctx context.Context, obj, old runtime.Object) field.ErrorList
}
