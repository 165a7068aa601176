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
	if m.GetName() == "" && m.GetGenerateName() == "" {
		return nil, apierrors.NewInvalid(s.gvk.GroupKind(), "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	s.fillCreateMeta(m)
	named := m.GetName() != ""
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
// PrepareForCreate, Validate, then the write (unless a dry run).
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
	if errs := s.res.Strategy.Validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(s.gvk.GroupKind(), m.GetName(), errs)
	}
	value, err := s.encode(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	key := s.res.Key(namespace, m.GetName())
	if opts.DryRun {
		if _, err := s.kv.Get(ctx, key); err == nil {
			return nil, apierrors.NewAlreadyExists(s.gr, m.GetName())
		}
		return obj, nil
	}
	rev, err := s.kv.Create(ctx, key, value)
	if err != nil {
		return nil, err
	}
	stored = true
	if err := setRV(obj, rev); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// checkNamespace refuses a body whose namespace differs from the URL's.
func (s *Store) checkNamespace(inBody, inURL string) error {
	if !s.res.Namespaced || inBody == "" || inBody == inURL {
		return nil
	}
	return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
}
