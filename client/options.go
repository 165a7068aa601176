package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// GetOptions are the options of Get.
type GetOptions struct {
	// UnsafeDisableDeepCopy fills obj with the cached object's fields
	// without copying: obj then shares maps, slices and pointers with the
	// cache (and, through compaction, with other cached objects). Never
	// modify it. For hot read-only paths.
	UnsafeDisableDeepCopy bool
}

// ListOptions are the options of List and DeleteAllOf.
type ListOptions struct {
	// Namespace limits the list to one namespace ("" = all).
	Namespace string
	// LabelSelector and FieldSelector filter; nil matches everything.
	// Cached lists answer field selectors through field indexes
	// (FieldIndexer), and metadata.name and metadata.namespace without.
	LabelSelector labels.Selector
	FieldSelector fields.Selector
	// UnsafeDisableDeepCopy: see GetOptions.
	UnsafeDisableDeepCopy bool
}

// CreateOptions, UpdateOptions, PatchOptions and DeleteOptions are the
// server's options of each write.
type (
	CreateOptions struct{ Raw metav1.CreateOptions }
	UpdateOptions struct {
		Raw metav1.UpdateOptions
		// SubResourceBody, for SubResource(...).Update, is sent instead of
		// obj (a Scale to deployments/scale) and receives the answer.
		SubResourceBody Object
	}
	PatchOptions struct {
		Raw metav1.PatchOptions
		// SubResourceBody: see UpdateOptions (patches only decode into
		// it).
		SubResourceBody Object
	}
	DeleteOptions struct{ Raw metav1.DeleteOptions }
)

// Options of each call: anything that applies itself to the call's
// options struct.
type (
	GetOption         interface{ ApplyToGet(*GetOptions) }
	ListOption        interface{ ApplyToList(*ListOptions) }
	CreateOption      interface{ ApplyToCreate(*CreateOptions) }
	UpdateOption      interface{ ApplyToUpdate(*UpdateOptions) }
	PatchOption       interface{ ApplyToPatch(*PatchOptions) }
	DeleteOption      interface{ ApplyToDelete(*DeleteOptions) }
	DeleteAllOfOption interface {
		ApplyToDeleteAllOf(*ListOptions, *DeleteOptions)
	}
	SubResourceGetOption    = GetOption
	SubResourceCreateOption = CreateOption
	SubResourceUpdateOption = UpdateOption
	SubResourcePatchOption  = PatchOption
)

// unsafeDisableDeepCopy is the UnsafeDisableDeepCopy option.
type unsafeDisableDeepCopy struct{}

// UnsafeDisableDeepCopy makes Get and List hand out the cached objects'
// contents without copying them. See GetOptions.UnsafeDisableDeepCopy.
var UnsafeDisableDeepCopy = unsafeDisableDeepCopy{}

func (unsafeDisableDeepCopy) ApplyToGet(o *GetOptions)   { o.UnsafeDisableDeepCopy = true }
func (unsafeDisableDeepCopy) ApplyToList(o *ListOptions) { o.UnsafeDisableDeepCopy = true }

// InNamespace limits List and DeleteAllOf to one namespace.
type InNamespace string

func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }
func (n InNamespace) ApplyToDeleteAllOf(o *ListOptions, _ *DeleteOptions) {
	o.Namespace = string(n)
}

// MatchingLabels selects objects carrying every one of these labels.
type MatchingLabels map[string]string

func (m MatchingLabels) ApplyToList(o *ListOptions) {
	o.LabelSelector = labels.SelectorFromValidatedSet(labels.Set(m))
}
func (m MatchingLabels) ApplyToDeleteAllOf(o *ListOptions, _ *DeleteOptions) { m.ApplyToList(o) }

// MatchingLabelsSelector selects objects by a label selector.
type MatchingLabelsSelector struct{ labels.Selector }

func (m MatchingLabelsSelector) ApplyToList(o *ListOptions) { o.LabelSelector = m.Selector }
func (m MatchingLabelsSelector) ApplyToDeleteAllOf(o *ListOptions, _ *DeleteOptions) {
	m.ApplyToList(o)
}

// MatchingFields selects objects whose fields (field indexes in the
// cache) have these values.
type MatchingFields fields.Set

func (m MatchingFields) ApplyToList(o *ListOptions) {
	o.FieldSelector = fields.SelectorFromSet(fields.Set(m))
}
func (m MatchingFields) ApplyToDeleteAllOf(o *ListOptions, _ *DeleteOptions) { m.ApplyToList(o) }

// MatchingFieldsSelector selects objects by a field selector.
type MatchingFieldsSelector struct{ fields.Selector }

func (m MatchingFieldsSelector) ApplyToList(o *ListOptions) { o.FieldSelector = m.Selector }
func (m MatchingFieldsSelector) ApplyToDeleteAllOf(o *ListOptions, _ *DeleteOptions) {
	m.ApplyToList(o)
}

// FieldOwner names the field manager of a write (server-side apply needs
// one).
type FieldOwner string

func (f FieldOwner) ApplyToCreate(o *CreateOptions) { o.Raw.FieldManager = string(f) }
func (f FieldOwner) ApplyToUpdate(o *UpdateOptions) { o.Raw.FieldManager = string(f) }
func (f FieldOwner) ApplyToPatch(o *PatchOptions)   { o.Raw.FieldManager = string(f) }

// ForceOwnership makes a server-side apply take fields other managers own.
var ForceOwnership = forceOwnership{}

type forceOwnership struct{}

func (forceOwnership) ApplyToPatch(o *PatchOptions) { o.Raw.Force = ptrTo(true) }

// DryRunAll asks the server to validate a write without storing it.
var DryRunAll = dryRunAll{}

type dryRunAll struct{}

func (dryRunAll) ApplyToCreate(o *CreateOptions)                        { o.Raw.DryRun = []string{metav1.DryRunAll} }
func (dryRunAll) ApplyToUpdate(o *UpdateOptions)                        { o.Raw.DryRun = []string{metav1.DryRunAll} }
func (dryRunAll) ApplyToPatch(o *PatchOptions)                          { o.Raw.DryRun = []string{metav1.DryRunAll} }
func (dryRunAll) ApplyToDelete(o *DeleteOptions)                        { o.Raw.DryRun = []string{metav1.DryRunAll} }
func (d dryRunAll) ApplyToDeleteAllOf(_ *ListOptions, o *DeleteOptions) { d.ApplyToDelete(o) }

// GracePeriodSeconds sets a delete's grace period.
type GracePeriodSeconds int64

func (g GracePeriodSeconds) ApplyToDelete(o *DeleteOptions) {
	o.Raw.GracePeriodSeconds = ptrTo(int64(g))
}
func (g GracePeriodSeconds) ApplyToDeleteAllOf(_ *ListOptions, o *DeleteOptions) { g.ApplyToDelete(o) }

// PropagationPolicy sets how a delete treats the object's dependents.
type PropagationPolicy metav1.DeletionPropagation

func (p PropagationPolicy) ApplyToDelete(o *DeleteOptions) {
	o.Raw.PropagationPolicy = ptrTo(metav1.DeletionPropagation(p))
}
func (p PropagationPolicy) ApplyToDeleteAllOf(_ *ListOptions, o *DeleteOptions) { p.ApplyToDelete(o) }

// Preconditions must hold for a delete to happen (UID, resourceVersion).
type Preconditions metav1.Preconditions

func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	pc := metav1.Preconditions(p)
	o.Raw.Preconditions = &pc
}
func (p Preconditions) ApplyToDeleteAllOf(_ *ListOptions, o *DeleteOptions) { p.ApplyToDelete(o) }

// WithSubResourceBody sends body instead of obj in SubResource(...).Update
// and Patch, and decodes the answer into it.
func WithSubResourceBody(body Object) subResourceBody { return subResourceBody{body} }

type subResourceBody struct{ body Object }

func (s subResourceBody) ApplyToUpdate(o *UpdateOptions) { o.SubResourceBody = s.body }
func (s subResourceBody) ApplyToPatch(o *PatchOptions)   { o.SubResourceBody = s.body }

func ptrTo[T any](v T) *T { return &v }

// Option collectors.

func getOptions(opts []GetOption) GetOptions {
	var o GetOptions
	for _, opt := range opts {
		opt.ApplyToGet(&o)
	}
	return o
}

// ListOptionsFrom applies opts in order.
func ListOptionsFrom(opts []ListOption) ListOptions {
	var o ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	return o
}

// CreateOptionsFrom, UpdateOptionsFrom, PatchOptionsFrom,
// DeleteOptionsFrom and DeleteAllOfOptionsFrom apply opts in order; the
// fake client uses them too.
func CreateOptionsFrom(opts []CreateOption) CreateOptions {
	var o CreateOptions
	for _, opt := range opts {
		opt.ApplyToCreate(&o)
	}
	return o
}

func UpdateOptionsFrom(opts []UpdateOption) UpdateOptions {
	var o UpdateOptions
	for _, opt := range opts {
		opt.ApplyToUpdate(&o)
	}
	return o
}

func PatchOptionsFrom(opts []PatchOption) PatchOptions {
	var o PatchOptions
	for _, opt := range opts {
		opt.ApplyToPatch(&o)
	}
	return o
}

func DeleteOptionsFrom(opts []DeleteOption) DeleteOptions {
	var o DeleteOptions
	for _, opt := range opts {
		opt.ApplyToDelete(&o)
	}
	return o
}

func DeleteAllOfOptionsFrom(opts []DeleteAllOfOption) (ListOptions, DeleteOptions) {
	var lo ListOptions
	var do DeleteOptions
	for _, opt := range opts {
		opt.ApplyToDeleteAllOf(&lo, &do)
	}
	return lo, do
}

// GetOptionsFrom applies opts in order.
func GetOptionsFrom(opts []GetOption) GetOptions { return getOptions(opts) }
