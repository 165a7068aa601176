package objects

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Store is the object layer of one resource.
type Store struct {
	res    *registry.Resource
	kv     storage.Store
	codecs *scheme.Codecs
	clock  clock.PassiveClock
	// gvk and gr are derived from res once.
	gvk schema.GroupVersionKind
	gr  schema.GroupResource
	// admit is the admission chain of every write; may be nil.
	admit AdmitFunc
	// validate is the validating admission of creates and updates; may
	// be nil.
	validate AdmitFunc
	// onDeleted runs after an object was removed from storage; may be nil.
	onDeleted func(ctx context.Context, obj runtime.Object)
}

// AdmitFunc is the admission chain of one resource's writes: it runs on
// create (after Default, before PrepareForCreate and Validate), on update of
// the main resource and of its subresources (after PrepareForUpdate and
// Default, before validation) and on delete, once per compare-and-swap
// attempt. It may change a.Object. A non-nil error is returned to the client
// as is. The Txn is finished once the attempt is known to be stored or not
// (a dry run, a failed write or a lost race is not).
type AdmitFunc func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error)

// Config builds a Store.
type Config struct {
	Resource *registry.Resource
	Storage  storage.Store
	Codecs   *scheme.Codecs
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	Admit AdmitFunc
	// Validate is the validating admission (kube-apiserver's validating
	// phase: ResourceQuota, LimitRanger's checks): it runs on creates and
	// updates after the strategy's validation, before the write, once per
	// attempt, and must not change the object; its Txn is finished as
	// Admit's.
	Validate AdmitFunc
	// OnDeleted runs after an object is removed from storage (to release
	// what admission allocated for it).
	OnDeleted func(ctx context.Context, obj runtime.Object)
}

// New returns the object layer of cfg.Resource.
func New(cfg Config) *Store {
	c := cfg.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return &Store{
		res: cfg.Resource, kv: cfg.Storage, codecs: cfg.Codecs, clock: c, admit: cfg.Admit, validate: cfg.Validate, onDeleted: cfg.OnDeleted,
		gvk: cfg.Resource.GVK(),
		gr:  schema.GroupResource{Group: cfg.Resource.Group, Resource: cfg.Resource.Resource},
	}
}

// admitWrite runs the admission chain on one write attempt.
func (s *Store) admitWrite(ctx context.Context, op registry.Operation, sub string, obj, old runtime.Object, opts WriteOptions) (*registry.Txn, error) {
	return s.runAdmission(ctx, s.admit, op, sub, obj, old, opts)
}

// The validating admission runs after kube-apiserver would have generated
// the name: it does not see GeneratedName.

// validateWrite runs the validating admission on one create or update
// attempt, after the strategy's validation.
func (s *Store) validateWrite(ctx context.Context, op registry.Operation, sub string, obj, old runtime.Object, opts WriteOptions) (*registry.Txn, error) {
	opts.generatedName = false
	return s.runAdmission(ctx, s.validate, op, sub, obj, old, opts)
}

func (s *Store) runAdmission(ctx context.Context, admit AdmitFunc, op registry.Operation, sub string, obj, old runtime.Object, opts WriteOptions) (*registry.Txn, error) {
	if admit == nil {
		return nil, nil
	}
	var m metav1.Object
	if obj != nil {
		m = accessor(obj)
	} else {
		m = accessor(old)
	}
	a := &registry.Attributes{
		Operation: op, Resource: s.res, Subresource: sub, Object: obj, Old: old, GeneratedName: opts.generatedName,
		Request: registry.Request{Namespace: m.GetNamespace(), Name: m.GetName(), User: registry.UserFrom(ctx), DryRun: opts.DryRun},
	}
	if sub == "scale" {
		return s.admitScale(ctx, admit, a)
	}
	return admit(ctx, a)
}

// Resource returns the descriptor this store serves.
func (s *Store) Resource() *registry.Resource { return s.res }

// Get reads the current object (a consistent read from storage).
func (s *Store) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	kv, err := s.kv.Get(ctx, s.res.Key(namespace, name))
	if err != nil {
		return nil, s.storageError(err, name)
	}
	obj, err := s.decode(ctx, kv)
	if err != nil {
		return nil, apiError(err)
	}
	return obj, nil
}

// storageError maps a storage error to an API error about object name.
func (s *Store) storageError(err error, name string) error {
	var conflict *storage.ConflictError
	var compacted *storage.CompactedError
	var api apierrors.APIStatus
	switch {
	case errors.As(err, &api):
		return err // already an API error (from a strategy or precondition)
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(s.gr, name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(s.gr, name)
	case errors.As(err, &conflict):
		return apierrors.NewConflict(s.gr, name, errors.New(registryConflictMsg))
	case errors.As(err, &compacted):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", compacted.Requested, compacted.Compacted))
	case errors.Is(err, storage.ErrFutureRevision):
		return newTooLargeRV(err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError(err.Error(), 1)
	}
	return apierrors.NewInternalError(err)
}

// registryConflictMsg is the message Kubernetes clients (and users) know.
const registryConflictMsg = "the object has been modified; please apply your changes to the latest version and try again"

// newTooLargeRV is Kubernetes' answer to a resourceVersion newer than the
// server has: 504 Timeout with cause ResourceVersionTooLarge.
func newTooLargeRV(err error) error {
	e := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %v", err), 1)
	e.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return e
}

// NewTooLargeResourceVersion builds the error for a read that asked for a
// revision the server has not reached.
func NewTooLargeResourceVersion(requested, current int64) error {
	return newTooLargeRV(fmt.Errorf("%d, current: %d", requested, current))
}

func accessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("objects: %T has no ObjectMeta: %v", obj, err)) // the registry only serves ObjectMeta kinds
	}
	return m
}

// invalidKind is the group and kind a 422 names: the resource's own, but
// for a view of another resource's storage the stored kind, since
// Kubernetes validates the stored (internal) form ("Event \"x\" is
// invalid" for an events.k8s.io/v1 Event).
func (s *Store) invalidKind() schema.GroupKind {
	if v := s.res.View; v != nil {
		return schema.GroupKind{Group: v.Group, Kind: v.Kind}
	}
	return s.gvk.GroupKind()
}
