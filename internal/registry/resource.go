package registry

import (
	"context"
	"slices"

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

// RowSorter is implemented by table convertors of kinds whose list tables
// kube-apiserver orders by content rather than as listed (FlowSchemas: by
// matching precedence, then name). SortRows orders the items of one page
// in place.
type RowSorter interface {
	SortRows(items []runtime.Object)
}

// RowConditioner is implemented by table convertors whose rows carry
// conditions (pods: a Completed condition once they succeeded or failed,
// which kubectl uses to tell finished pods apart).
type RowConditioner interface {
	RowConditions(obj runtime.Object) []metav1.TableRowCondition
}

// ListTableConvertor is implemented by table convertors whose cells for
// an object of a list depend on the other items of the list (storage
// classes: only the effective default class of a list is marked
// "(default)", and a single object never is, as kube-apiserver prints
// them).
type ListTableConvertor interface {
	TableConvertor
	// ListCells returns the rows of the items of one list (or list
	// page), one per item, in order.
	ListCells(items []runtime.Object) ([][]interface{}, error)
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

// ScaleReplicasPaths is implemented by a ScaleAccessor whose spec replicas
// are not at spec.replicas of its own version only (a custom resource's
// specReplicasPath): the path in each version of its group, keyed by
// group/version ("example.com/v1"), nil for a version without the scale
// subresource. Field ownership of the replicas moves between the object's
// entries and the scale subresource's by these paths.
type ScaleReplicasPaths interface {
	SpecReplicasPaths() map[string][]string
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
	// ResetFields, when set, are the field paths a write of the main
	// resource never takes ownership of in managedFields, as Kubernetes'
	// GetResetFields (certificatesigningrequests: spec and status); unset,
	// they are ["status"] for kinds with a status subresource, else none.
	ResetFields [][]string
	// Scale is nil for kinds without a scale subresource.
	Scale ScaleAccessor
	// Subresources are the kind's other subresources (hooks.go), in the
	// order discovery lists them (by name).
	Subresources []Subresource
	// Admit is the kind's own admission (hooks.go); nil admits everything.
	Admit AdmitFunc
	// AdmitValidate is the kind's validating admission (hooks.go): it
	// runs after validation, before the write, and must not change the
	// object; nil admits everything.
	AdmitValidate AdmitFunc
	// AfterDelete runs once an object has left storage; may be nil.
	AfterDelete AfterDeleteFunc
	// Quota says what the kind's objects use of a ResourceQuota (quota.go);
	// nil counts objects only (count/<resource>.<group>).
	Quota QuotaEvaluator
	// ReturnDeletedObject: a DELETE that removes the object answers with
	// the object instead of a success Status (pods, services, as
	// kube-apiserver answers).
	ReturnDeletedObject bool
	// Virtual is set for resources whose objects are not stored (hooks.go):
	// their verbs are those Virtual serves.
	Virtual *Virtual
	// View is set for a resource that is another's storage seen in its own
	// version and Go type (hooks.go).
	View *StorageView
	// NoUnconditionalUpdate: an update (PUT) must name the resourceVersion
	// it replaces, as kube-apiserver requires of kinds whose strategy does
	// not allow unconditional updates (poddisruptionbudgets,
	// clustertrustbundles, podcertificaterequests): one without is a 422.
	// Patches apply to the current object and always do.
	NoUnconditionalUpdate bool
	// OrphanByDefault: a DELETE that names no propagation policy orphans
	// the object's dependents (adds the "orphan" finalizer), as
	// kube-apiserver's default garbage-collection policy of batch/v1 jobs.
	OrphanByDefault bool
	// OrphanWarning, when set, is the warning a DELETE or deletecollection
	// that names no propagation policy answers with (an HTTP Warning
	// header), as kube-apiserver warns that deleting a job keeps its pods.
	OrphanWarning string
	// PreconditionFailed, when set, words a failed delete precondition as
	// the kinds whose Kubernetes storage checks them itself do
	// (namespaces: "Precondition failed", CRDs: "precondition failed"):
	// "<it>: UID in precondition: x, UID in object meta: y", a 409 naming
	// the resource ("namespaces") rather than the kind.
	PreconditionFailed string
	// NoGarbageCollection: deletion ignores the propagation policy (no
	// orphan or foregroundDeletion finalizer is added, an existing one is
	// removed), as kube-apiserver deletes kinds whose strategy's
	// DefaultGarbageCollectionPolicy is Unsupported (events).
	NoGarbageCollection bool
	// NoDeleteCollection is true for kinds kube-apiserver serves no
	// deletecollection for (namespaces: DELETE on the collection is 405).
	NoDeleteCollection bool
	// Deprecation, when set, is the warning every request on the resource
	// answers with (an HTTP Warning header, as kube-apiserver sends for
	// deprecated resources: "v1 ComponentStatus is deprecated in v1.19+").
	Deprecation string
	// NoGeneration is true for kinds whose Kubernetes strategy keeps no
	// metadata.generation (configmaps, secrets, services, namespaces,
	// nodes, events, leases): it stays unset instead of 1, +1 per spec
	// change.
	NoGeneration bool
	// StaticGeneration is true for kinds whose Kubernetes strategy sets
	// metadata.generation to 1 on create and never moves it on update
	// (priorityclasses): it stays 1 whatever changes.
	StaticGeneration bool
	// LabelsInGeneration: a change of metadata.labels moves
	// metadata.generation as a spec change does, as kube-apiserver's
	// endpointslices strategy counts it.
	LabelsInGeneration bool
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
	// Typed resources are stored in the protobuf of their Go type whatever
	// it says; for them it names the version kube-apiserver stores them
	// at (v1beta1 for ClusterTrustBundles), which discovery publishes as
	// the storageVersionHash.
	StorageVersion string
	// Converter converts an Unstructured resource's objects between the
	// versions of their CustomResourceDefinition (its conversion webhook):
	// the object layer converts what it reads from storage to Version and
	// what it writes to StorageVersion. Nil when versions differ only in
	// apiVersion (conversion strategy None). Shared and safe for
	// concurrent use.
	Converter VersionConverter
	// Bootstrap returns the objects of the kind that exist from the start
	// (the system namespaces, the kubernetes service): the server creates
	// them when missing and leaves them alone when present. May be nil.
	Bootstrap func() []runtime.Object
	// Reconcile, when set, brings a stored Bootstrap object up to date at
	// every start instead of leaving it alone (as kube-apiserver's
	// rbac/bootstrap-roles post-start hook reconciles the default roles
	// and bindings): it changes stored in place toward want, the object's
	// Bootstrap definition, and reports recreate when stored cannot become
	// want by an update (an immutable field differs); the server then
	// deletes stored and creates want. A stored object left unchanged is
	// not written. The server is ready only after every object is
	// reconciled. May be nil.
	Reconcile func(stored, want runtime.Object) (recreate bool)
	// Advertised returns the objects of the kind that publish where the
	// API server is (the kubernetes Service's Endpoints and EndpointSlice,
	// which kube-apiserver's endpoint reconciler keeps): the server creates
	// them when missing and resets them when their content (all but the
	// metadata, labels included) differs, at start and periodically. May
	// be nil.
	Advertised func(Advertisement) []runtime.Object
	// Attrs extracts labels and selectable fields.
	Attrs AttrFunc
	// TriggerFields names the selectable fields (of Attrs' set) by whose
	// exact value the watch cache indexes watchers, besides metadata.name,
	// which every kind has: a watcher selecting field=value is offered only
	// the events whose new or old object has that value (pods:
	// spec.nodeName, as kube-apiserver's pod registry names its trigger).
	// Name a field that many watchers select with one value each; nil for
	// most kinds.
	TriggerFields []string
	// FieldLabelError returns the message of the 400 answering a field
	// selector on a field the kind does not support (Attrs' set). Kinds
	// differ in kube-apiserver: strategy.UnknownFieldLabel gives the
	// message of kinds without field labels of their own. Nil answers
	// "field label not supported: <label>".
	FieldLabelError func(label string) string
	// Table renders `kubectl get` columns.
	Table TableConvertor
}

// Advertisement is where the API server is reached: an IP address and its
// secure port.
type Advertisement struct {
	IP   string
	Port int32
}

// GroupVersion returns the resource's group/version.
func (r *Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// GVR returns the resource's group/version/resource.
func (r *Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// StorageGVK returns the group/version/kind objects are stored as, the
// zero value for resources that are not stored.
func (r *Resource) StorageGVK() schema.GroupVersionKind {
	switch {
	case r.Virtual != nil:
		return schema.GroupVersionKind{}
	case r.View != nil:
		return schema.GroupVersionKind{Group: r.View.Group, Version: r.View.Version, Kind: r.View.Kind}
	case r.StorageVersion != "":
		return schema.GroupVersionKind{Group: r.Group, Version: r.StorageVersion, Kind: r.Kind}
	}
	return r.GVK()
}

// GVK returns the resource's group/version/kind.
func (r *Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// KeyPrefix returns the storage prefix of all objects of the resource,
// ending in "/". Keys are "/registry/<group>/<resource>/<namespace>/<name>"
// (core group: "core"; cluster-scoped kinds have no namespace segment).
func (r *Resource) KeyPrefix() string {
	g, res := r.Group, r.Resource
	if r.View != nil {
		g, res = r.View.Group, r.View.Resource
	}
	if g == "" {
		g = "core"
	}
	return "/registry/" + g + "/" + res + "/"
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

// Verbs lists the verbs discovery advertises for the main resource, sorted.
func (r *Resource) Verbs() []string {
	if v := r.Virtual; v != nil {
		var out []string
		if v.Create != nil {
			out = append(out, "create")
		}
		if v.Get != nil {
			out = append(out, "get")
		}
		if v.List != nil {
			out = append(out, "list")
		}
		return out
	}
	if r.NoDeleteCollection {
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// Serves reports whether the main resource serves verb.
func (r *Resource) Serves(verb string) bool {
	return slices.Contains(r.Verbs(), verb)
}

// Subresource returns the named subresource of Subresources, nil if the
// kind has none of that name (status and scale are fields of their own).
func (r *Resource) Subresource(name string) *Subresource {
	for i := range r.Subresources {
		if r.Subresources[i].Name == name {
			return &r.Subresources[i]
		}
	}
	return nil
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

// NameDefaulter is implemented by strategies of kinds whose objects may be
// created with neither a name nor a generateName (LimitRanges: Kubernetes
// names them with a random UUID).
type NameDefaulter interface {
	DefaultName() string
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

// StoredDefaulter is implemented by strategies of kinds whose stored form
// cannot carry everything Kubernetes shows: Kubernetes defaults every
// object it decodes from storage, so what its defaulting sets (the
// apiVersion and kind of a statefulset's claim templates, which protobuf
// does not keep) is there on every read. DefaultStored fills it in on
// objects the server decodes from storage.
type StoredDefaulter interface {
	DefaultStored(obj runtime.Object)
}
