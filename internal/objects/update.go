package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// UpdateFunc computes the desired object from the current one. current is
// nil when the object does not exist (only for kinds that allow create on
// update). It must not mutate current and must return a new object; it may
// be called several times when a concurrent write intervenes.
type UpdateFunc func(current runtime.Object) (runtime.Object, error)

// UpdateOptions apply to Update.
type UpdateOptions struct {
	WriteOptions
	// Subresource is "" for the main resource, "status", "scale" (the
	// main resource's strategy, with admission on Scale views: scale.go)
	// or one of the kind's Update subresources.
	Subresource string
	// RequireResourceVersion refuses an update of an existing object that
	// names no resourceVersion, as kube-apiserver refuses a PUT to kinds
	// that allow no unconditional update (registry.Resource.
	// NoUnconditionalUpdate).
	RequireResourceVersion bool
	// AllowCreate lets fn create a missing object of any kind (server-side
	// apply), not only of kinds whose strategy allows create on update.
	AllowCreate bool
	// UIDPrecondition makes a uid in the new object a precondition checked
	// against the stored one first (a 409, as kube-apiserver treats the uid
	// of a PUT body); otherwise a changed uid is refused by validation (422,
	// as for a patch).
	UIDPrecondition bool
}

// retryConflict tells whether a write that lost a compare-and-swap race
// is tried again: as long as the request lives, as
// Kubernetes' GuaranteedUpdate does. Every lost race means another write
// succeeded, so the system as a whole progresses; only the request's
// deadline bounds one writer's retries.
func retryConflict(ctx context.Context) bool {
	return ctx.Err() == nil
}

// Update reads the object, applies fn, and writes the result with
// compare-and-swap. If the new object names a resourceVersion, it must be
// the current one (else 409 Conflict); if it names none, the update is
// unconditional and retried on races. An update that changes nothing is not
// written. An object being deleted whose last finalizer the update removes
// is deleted. It returns the stored object and whether it was created.
func (s *Store) Update(ctx context.Context, namespace, name string, fn UpdateFunc, opts UpdateOptions) (runtime.Object, bool, error) {
	key := s.res.Key(namespace, name)
	for {
		kv, err := s.kv.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return s.createOnUpdate(ctx, namespace, name, fn, opts)
		}
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		current, err := s.decode(ctx, kv)
		if err != nil {
			return nil, false, apiError(err)
		}
		obj, err := fn(current)
		if err != nil {
			return nil, false, err
		}
		out, conditional, err := s.tryUpdate(ctx, kv, current, obj, opts)
		var conflict *storage.ConflictError
		if errors.As(err, &conflict) && !conditional && retryConflict(ctx) {
			continue
		}
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		return out, false, nil
	}
}

// tryUpdate runs the update pipeline once against the state in kv.
// conditional reports whether the client named a resourceVersion.
func (s *Store) tryUpdate(ctx context.Context, kv storage.KeyValue, current, obj runtime.Object, opts UpdateOptions) (runtime.Object, bool, error) {
	m, old := accessor(obj), accessor(current)
	if m.GetResourceVersion() == "" && opts.RequireResourceVersion {
		// kube-apiserver names the resource where the kind should be.
		return nil, false, apierrors.NewInvalid(schema.GroupKind{Group: s.gr.Group, Kind: s.gr.Resource}, m.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	}
	if m.GetName() != old.GetName() {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf(
			"the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), old.GetName()))
	}
	if err := s.checkNamespace(m.GetNamespace(), old.GetNamespace()); err != nil {
		return nil, false, err
	}
	m.SetNamespace(old.GetNamespace())
	if uid := m.GetUID(); opts.UIDPrecondition && uid != "" && uid != old.GetUID() {
		// As kube-apiserver: a uid in the body is a precondition of the
		// update, checked in storage before anything else.
		return nil, false, apierrors.NewConflict(s.gr, m.GetName(), fmt.Errorf(
			"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %v, UID in object meta: %v",
			kubeStorageKey(s.res, old.GetNamespace(), old.GetName()), uid, old.GetUID()))
	}
	conditional := m.GetResourceVersion() != ""
	if conditional {
		rv, ok := ParseResourceVersion(m.GetResourceVersion())
		if !ok {
			return nil, true, apierrors.NewInvalid(s.invalidKind(), m.GetName(), field.ErrorList{field.Invalid(
				field.NewPath("metadata", "resourceVersion"), m.GetResourceVersion(), "must be a non-negative integer")})
		}
		if rv != kv.ModRevision {
			return nil, true, apierrors.NewConflict(s.gr, m.GetName(), errors.New(registryConflictMsg))
		}
	}
	carryUpdateMeta(m, old)
	sub, err := s.subresourceStrategy(opts.Subresource)
	if err != nil {
		return nil, conditional, err
	}
	sub.prepare(obj, current)
	txn, err := s.admitWrite(ctx, registry.Update, opts.Subresource, obj, current, opts.WriteOptions)
	if err != nil {
		return nil, conditional, err
	}
	stored := false
	defer func() { txn.Finish(stored) }()
	if errs := validateUpdate(ctx, sub.validator, obj, current); len(errs) > 0 {
		return nil, conditional, apierrors.NewInvalid(s.invalidKind(), m.GetName(), uniqueErrors(errs))
	}
	// As kube-apiserver: the kind's warnings go out before the validating
	// admission runs, and with its refusal.
	if w, ok := s.res.Strategy.(registry.WarningsStrategy); ok && (opts.Subresource == "" || opts.Subresource == "scale") {
		for _, msg := range w.WarningsOnUpdate(obj, current) {
			registry.AddWarning(ctx, msg)
		}
	}
	vtxn, err := s.validateWrite(ctx, registry.Update, opts.Subresource, obj, current, opts.WriteOptions)
	if err != nil {
		return nil, conditional, err
	}
	defer func() { vtxn.Finish(stored) }()
	relabeled := s.res.LabelsInGeneration && !equality.Semantic.DeepEqual(m.GetLabels(), old.GetLabels())
	if !s.res.NoGeneration && !s.res.StaticGeneration && (relabeled || s.specChanged(obj, current)) {
		m.SetGeneration(old.GetGeneration() + 1)
	}
	value, err := s.encode(ctx, obj)
	if err != nil {
		return nil, conditional, apiError(err)
	}
	if bytes.Equal(value, kv.Value) {
		return current, conditional, nil // nothing changed: no write, no event
	}
	if opts.DryRun {
		// As Kubernetes answers a dry run: the object as it would be
		// written, at the revision it would replace.
		if err := setRV(obj, kv.ModRevision); err != nil {
			return nil, conditional, err
		}
		out, err := s.answer(ctx, value, obj)
		return out, conditional, err
	}
	if m.GetDeletionTimestamp() != nil && !s.holdsDeletion(obj, m) {
		rev, _, err := s.deleteKey(ctx, kv, obj)
		if err != nil {
			return nil, conditional, err
		}
		stored = true
		return obj, conditional, setRV(obj, rev)
	}
	rev, err := s.kv.Update(ctx, kv.Key, value, kv.ModRevision)
	if err != nil {
		return nil, conditional, err
	}
	stored = true
	if err := setRV(obj, rev); err != nil {
		return nil, conditional, err
	}
	out, err := s.answer(ctx, value, obj)
	return out, conditional, err
}

// updateSteps are the strategy steps of an update through one endpoint:
// prepare (PrepareForUpdate, and Default on the main resource) runs before
// admission, validate after.
type updateSteps struct {
	prepare   func(obj, old runtime.Object)
	validator updateValidator
}

// updateValidator is a strategy or a status strategy (validateUpdate asks
// it for its context-aware form first).
type updateValidator interface {
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// subresourceStrategy returns the update steps of the main resource (""
// and scale, whose writes change the object's replicas through its own
// strategy, as kube-apiserver's) or of a subresource (status, or one of
// the kind's Update subresources).
func (s *Store) subresourceStrategy(subresource string) (updateSteps, error) {
	switch subresource {
	case "", "scale":
		st := s.res.Strategy
		return updateSteps{
			prepare:   func(obj, old runtime.Object) { st.PrepareForUpdate(obj, old); st.Default(obj) },
			validator: st,
		}, nil
	case "status":
		if s.res.Status != nil {
			return updateSteps{prepare: s.res.Status.PrepareForUpdate, validator: s.res.Status}, nil
		}
	default:
		if sr := s.res.Subresource(subresource); sr != nil && sr.Update != nil {
			return updateSteps{prepare: sr.Update.PrepareForUpdate, validator: sr.Update}, nil
		}
	}
	return updateSteps{}, apierrors.NewInternalError(fmt.Errorf("objects: no update logic for subresource %q", subresource))
}

// holdsDeletion reports whether anything keeps an object that is being
// deleted: finalizers, a pending grace period, or a kind-specific hold.
func (s *Store) holdsDeletion(obj runtime.Object, m metav1.Object) bool {
	if len(m.GetFinalizers()) > 0 {
		return true
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g > 0 {
		return true
	}
	if h, ok := s.res.Strategy.(registry.DeletionHolder); ok {
		return h.HoldsDeletion(obj)
	}
	return false
}

func (s *Store) createOnUpdate(ctx context.Context, namespace, name string, fn UpdateFunc, opts UpdateOptions) (runtime.Object, bool, error) {
	c, ok := s.res.Strategy.(registry.CreateOnUpdateStrategy)
	if (!opts.AllowCreate && (!ok || !c.AllowCreateOnUpdate())) || opts.Subresource != "" {
		return nil, false, apierrors.NewNotFound(s.gr, name)
	}
	obj, err := fn(nil)
	if err != nil {
		return nil, false, err
	}
	m := accessor(obj)
	if m.GetName() != name {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf(
			"the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	m.SetResourceVersion("")
	out, err := s.Create(ctx, namespace, obj, opts.WriteOptions)
	return out, err == nil, err
}
