package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/fieldmanager"
	"github.com/setpoint-dev/setpoint/internal/objects"
)

// initFieldManagers builds the type converter from the OpenAPI definitions
// the server publishes, then the field managers of every resource.
func (s *Server) initFieldManagers(schemas map[string]*spec.Schema) error {
	tc, err := fieldmanager.NewTypeConverter(schemas)
	if err != nil {
		return err
	}
	for _, e := range s.table.load() {
		if v := e.res.Virtual; v != nil && v.Create == nil {
			continue // nothing written: no managed fields
		}
		if e.fm, err = fieldmanager.New(tc, s.codecs.Scheme, e.res); err != nil {
			return err
		}
	}
	return nil
}

// optionsInvalid is Kubernetes' answer to invalid CreateOptions,
// UpdateOptions or PatchOptions: 422 on the meta.k8s.io kind.
func optionsInvalid(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// writeManager returns the manager of a create or update (the fieldManager
// parameter, else the user agent's first segment), after validating the
// parameter as Kubernetes does.
func writeManager(r *http.Request, kind string) (string, error) {
	fm := r.URL.Query().Get("fieldManager")
	if errs := metavalidation.ValidateFieldManager(fm, field.NewPath("fieldManager")); len(errs) > 0 {
		return "", optionsInvalid(kind, errs)
	}
	return fieldmanager.ManagerName(fm, r.UserAgent()), nil
}

// patchOptions reads and validates the PatchOptions of a patch for its
// type, as kube-apiserver (422 on PatchOptions.meta.k8s.io): dryRun,
// fieldValidation, fieldManager (required for apply), force (apply only).
func patchOptions(r *http.Request, patchType string) (manager string, force bool, err error) {
	q := r.URL.Query()
	opts := &metav1.PatchOptions{FieldManager: q.Get("fieldManager"), DryRun: q["dryRun"], FieldValidation: q.Get("fieldValidation")}
	if q.Has("force") {
		b := queryBool(q, "force")
		opts.Force = &b
	}
	if errs := metavalidation.ValidatePatchOptions(opts, types.PatchType(patchType)); len(errs) > 0 {
		return "", false, optionsInvalid("PatchOptions", errs)
	}
	if opts.Force != nil {
		force = *opts.Force
	}
	return fieldmanager.ManagerName(opts.FieldManager, r.UserAgent()), force, nil
}

// trackUpdate defaults obj as decoding does in Kubernetes (so defaulted
// fields belong to the writer) and records manager's Update entry.
func (e *entry) trackUpdate(live, obj runtime.Object, manager, subresource string) runtime.Object {
	if subresource == "" {
		e.res.Strategy.Default(obj)
	}
	return e.fm.Update(live, obj, manager, subresource)
}

// handleApply serves PATCH with application/apply-patch+yaml: the body is
// merged into the live object (or a new one: apply creates) for the
// manager; conflicts with other managers are 409 unless force=true.
func (s *Server) handleApply(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType, p *patcher, dry bool, fv fieldValidation) {
	manager, force, err := patchOptions(r, patchApply)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	conditional := p.setsResourceVersion()
	fn := func(current runtime.Object) (runtime.Object, error) {
		obj, warnings, err := e.fm.Apply(current, p.body, manager, info.Subresource, force, fv == validationStrict)
		if err != nil {
			return nil, err
		}
		if fv == validationWarn {
			for _, msg := range warnings {
				addWarning(w, msg)
			}
		}
		if err := s.pruneUnknown(w, e, fv, obj); err != nil {
			return nil, err
		}
		if current == nil && e.terminating() {
			return nil, errTerminatingCRD()
		}
		m := objectMeta(obj)
		if !conditional || current == nil {
			m.SetResourceVersion("")
		}
		return obj, nil
	}
	opts := objects.UpdateOptions{
		WriteOptions: objects.WriteOptions{DryRun: dry}, Subresource: info.Subresource, AllowCreate: true,
	}
	out, created, err := e.store.Update(r.Context(), info.Namespace, info.Name, fn, opts)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeResult(w, r, code, mt, e, out)
}
