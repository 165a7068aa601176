package objects

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// WriteOptions apply to create, update and patch.
type WriteOptions struct {
	// DryRun runs the whole pipeline but does not write.
	DryRun bool
	// generatedName: the create's name was generated from generateName
	// for this attempt (registry.Attributes.GeneratedName).
	generatedName bool
}

// generateNameAttempts bounds retries when a generated name is taken.
const generateNameAttempts = 8

// Create stores a new object in namespace (ignored for cluster-scoped
// kinds). obj is consumed: the caller must not use it afterwards.
func (s *Store) Create(ctx context.Context, namespace string, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	m := accessor(obj)
	if err := s.checkNamespace(m.GetNamespace(), namespace); err != nil {
		return nil, err
	}
	if s.res.Namespaced {
		m.SetNamespace(namespace)
	} else {
		m.SetNamespace("")
	}
	if m.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	if d, ok := s.res.Strategy.(registry.NameDefaulter); ok && m.GetName() == "" && m.GetGenerateName() == "" {
		m.SetName(d.DefaultName())
	}
	if m.GetName() == "" && m.GetGenerateName() == "" {
		return nil, apierrors.NewInvalid(s.invalidKind(), "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	s.fillCreateMeta(m)
	named := m.GetName() != ""
	opts.generatedName = !named
	for attempt := 0; ; attempt++ {
		if !named {
			m.SetName(generateName(m.GetGenerateName()))
		}
		out, err := s.tryCreate(ctx, namespace, obj, opts)
		if errors.Is(err, storage.ErrKeyExists) && !named && attempt < generateNameAttempts {
			continue
		}
		if err != nil {
			return nil, s.storageError(err, m.GetName())
		}
		return out, nil
	}
}

// tryCreate runs the create pipeline once: Default, admission,
// PrepareForCreate, Validate, validating admission, then the write (unless
// a dry run).
func (s *Store) tryCreate(ctx context.Context, namespace string, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	m := accessor(obj)
	s.res.Strategy.Default(obj)
	txn, err := s.admitWrite(ctx, registry.Create, "", obj, nil, opts)
	if err != nil {
		return nil, err
	}
	stored := false
	defer func() { txn.Finish(stored) }()
	s.res.Strategy.PrepareForCreate(obj)
	if errs := validateCreate(ctx, s.res.Strategy, obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(s.invalidKind(), m.GetName(), uniqueErrors(errs))
	}
	// As kube-apiserver: the kind's warnings go out before the validating
	// admission runs, and with its refusal.
	if w, ok := s.res.Strategy.(registry.WarningsStrategy); ok {
		for _, msg := range w.WarningsOnCreate(obj) {
			registry.AddWarning(ctx, msg)
		}
	}
	vtxn, err := s.validateWrite(ctx, registry.Create, "", obj, nil, opts)
	if err != nil {
		return nil, err
	}
	defer func() { vtxn.Finish(stored) }()
	value, err := s.encode(ctx, obj)
	if err != nil {
		return nil, apiError(err)
	}
	key := s.res.Key(namespace, m.GetName())
	if opts.DryRun {
		if _, err := s.kv.Get(ctx, key); err == nil {
			return nil, apierrors.NewAlreadyExists(s.gr, m.GetName())
		}
		return s.createAnswer(ctx, value, obj)
	}
	rev, err := s.kv.Create(ctx, key, value)
	if err != nil {
		return nil, err
	}
	stored = true
	if err := setRV(obj, rev); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return s.createAnswer(ctx, value, obj)
}

// createAnswer is the answer of a create that stored (or would store)
// value.
func (s *Store) createAnswer(ctx context.Context, value []byte, obj runtime.Object) (runtime.Object, error) {
	out, err := s.answer(ctx, value, obj)
	if err != nil {
		return nil, err
	}
	return s.asRead(out), nil
}

// asRead gives the answer of a create what a read of the stored object
// gives (registry.StoredDefaulter), as kube-apiserver answers with the
// object it decodes from storage.
func (s *Store) asRead(obj runtime.Object) runtime.Object {
	if d, ok := s.res.Strategy.(registry.StoredDefaulter); ok {
		d.DefaultStored(obj)
	}
	return obj
}

// checkNamespace refuses a body whose namespace differs from the URL's.
func (s *Store) checkNamespace(inBody, inURL string) error {
	if !s.res.Namespaced || inBody == "" || inBody == inURL {
		return nil
	}
	return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
}

// validateCreate runs the strategy's create validation, with the request's
// context when the strategy takes one.
func validateCreate(ctx context.Context, st registry.Strategy, obj runtime.Object) field.ErrorList {
	if cv, ok := st.(registry.ContextValidator); ok {
		return cv.ValidateContext(ctx, obj)
	}
	return st.Validate(obj)
}

// validateUpdate is validateCreate for updates; v is a strategy or a
// status strategy.
func validateUpdate(ctx context.Context, v interface {
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}, obj, old runtime.Object) field.ErrorList {
	if cv, ok := v.(registry.ContextUpdateValidator); ok {
		return cv.ValidateUpdateContext(ctx, obj, old)
	}
	return v.ValidateUpdate(obj, old)
}

// uniqueErrors drops repeated field errors, as kube-apiserver answers: a
// kind's update rules check the metadata, then check it again as part of
// the object, and the same error is reported once.
func uniqueErrors(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	seen := make(map[string]bool, len(errs))
	for _, e := range errs {
		k := string(e.Type) + "\x00" + e.Field + "\x00" + e.ErrorBody()
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
