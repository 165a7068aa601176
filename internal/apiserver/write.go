package apiserver

import (
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Kinds of the options of write requests, named in their 422 answers.
const (
	createOptions = "CreateOptions"
	updateOptions = "UpdateOptions"
)

// writeQuery validates the query of a create or update as kube-apiserver
// validates its CreateOptions or UpdateOptions (dryRun, fieldManager,
// fieldValidation: 422 on <kind>.meta.k8s.io), and returns dryRun.
func writeQuery(r *http.Request, kind string) (dry bool, err error) {
	q := r.URL.Query()
	var errs field.ErrorList
	if kind == updateOptions {
		errs = metavalidation.ValidateUpdateOptions(&metav1.UpdateOptions{
			DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")})
	} else {
		errs = metavalidation.ValidateCreateOptions(&metav1.CreateOptions{
			DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")})
	}
	if len(errs) > 0 {
		return false, optionsInvalid(kind, errs)
	}
	return len(q["dryRun"]) > 0, nil
}

// readWrite validates the query of a write request (its options of kind
// kind) and reads its body.
func (s *Server) readWrite(r *http.Request, kind string) (dry bool, body []byte, err error) {
	if dry, err = writeQuery(r, kind); err != nil {
		return false, nil, err
	}
	body, err = readBody(r, s.cfg.MaxBodyBytes)
	return dry, body, err
}

// readObject reads a create or update request: dryRun and the decoded
// object.
func (s *Server) readObject(w http.ResponseWriter, r *http.Request, e *entry, kind string) (bool, runtime.Object, error) {
	dry, body, err := s.readWrite(r, kind)
	if err != nil {
		return false, nil, err
	}
	obj, err := s.decodeObject(w, r, e, body)
	if err == nil {
		s.auditRequestObject(r, e, obj, true)
	}
	return dry, obj, err
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	if e.terminating() {
		s.resp.writeError(w, r, errTerminatingCRD())
		return
	}
	dry, obj, err := s.readObject(w, r, e, createOptions)
	var manager string
	if err == nil {
		manager, err = writeManager(r, createOptions)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	obj = e.trackUpdate(nil, obj, manager, "")
	out, err := e.store.Create(r.Context(), info.Namespace, obj, objects.WriteOptions{DryRun: dry})
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusCreated, mt, e, out)
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	dry, obj, err := s.readObject(w, r, e, updateOptions)
	var manager string
	if err == nil {
		manager, err = writeManager(r, updateOptions)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	fn := func(current runtime.Object) (runtime.Object, error) {
		if current != nil && e.res.NoUnconditionalUpdate && objectMeta(obj).GetResourceVersion() == "" {
			return nil, unconditionalUpdate(e, info.Name)
		}
		return e.trackUpdate(current, obj.DeepCopyObject(), manager, info.Subresource), nil
	}
	opts := objects.UpdateOptions{WriteOptions: objects.WriteOptions{DryRun: dry}, Subresource: info.Subresource, UIDPrecondition: true,
		RequireResourceVersion: e.res.NoUnconditionalUpdate}
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

// unconditionalUpdate is kube-apiserver's answer to an update without
// resourceVersion of a kind that requires one: a 422 naming the resource
// where the kind would be.
func unconditionalUpdate(e *entry, name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: e.res.Group, Kind: e.res.Resource}, name, field.ErrorList{
		field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
}

// deleteOptions reads DeleteOptions from the body (if any) and the query.
func (s *Server) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := readBody(r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		if err := checkDeleteOptionsKind(body); err != nil {
			return nil, err
		}
		err := s.decodeOptionsBody(r, body, nil, opts)
		if runtime.IsNotRegisteredError(err) {
			// As Kubernetes: DeleteOptions come in any group's version
			// (client-go sends the resource's, e.g. a CRD group's).
			err = decodeAnyVersionDeleteOptions(body, opts)
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		audit.LogRequestObject(r.Context(), opts, schema.GroupVersionResource{}, "", auditDeleteOptions)
	}
	if err := deleteQuery(r, opts); err != nil {
		return nil, err
	}
	// As kube-apiserver: propagation policy, its conflict with
	// orphanDependents, dryRun (422 on DeleteOptions.meta.k8s.io).
	if errs := metavalidation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, optionsInvalid("DeleteOptions", errs)
	}
	if opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds < 0 {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	return opts, nil
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	opts, err := s.deleteOptions(r)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	warnOrphaning(r, e.res, opts)
	out, gone, err := e.store.Delete(r.Context(), info.Namespace, info.Name, opts)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	if gone && !e.res.ReturnDeletedObject {
		m := objectMeta(out)
		s.resp.writeObject(w, r, http.StatusOK, mediaType{Type: mt.Type}, &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Details: &metav1.StatusDetails{
				Name: info.Name, Group: e.res.Group, Kind: e.res.Resource, UID: m.GetUID(),
			},
		})
		return
	}
	s.writeResult(w, r, http.StatusOK, mt, e, out)
}

func (s *Server) handleDeleteCollection(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	opts, err := s.deleteOptions(r)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	warnOrphaning(r, e.res, opts)
	sel, err := parseSelectors(r.URL.Query())
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	list, err := e.store.List(r.Context(), objects.ListOptions{Namespace: info.Namespace, Label: sel.label, Field: sel.field})
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	items, err := listItems(list)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	var deleted []runtime.Object
	for _, item := range items {
		m := objectMeta(item)
		out, _, err := e.store.Delete(r.Context(), m.GetNamespace(), m.GetName(), opts)
		if apierrors.IsNotFound(err) {
			continue // deleted concurrently: the collection is still gone
		}
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		deleted = append(deleted, out)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		s.resp.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	rev, _ := objects.ParseResourceVersion(lm.GetResourceVersion())
	result, err := e.store.NewListFrom(deleted, rev, "")
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusOK, mt, e, result)
}

// warnOrphaning sends the resource's OrphanWarning when a deletion names
// no propagation policy (whatever then becomes of it: kube-apiserver warns
// before it looks the object up).
func warnOrphaning(r *http.Request, res *registry.Resource, opts *metav1.DeleteOptions) {
	//nolint:staticcheck // OrphanDependents is still honoured by Kubernetes
	if res.OrphanWarning != "" && opts.PropagationPolicy == nil && opts.OrphanDependents == nil {
		registry.AddWarning(r.Context(), res.OrphanWarning)
	}
}

// deleteQuery applies the DeleteOptions a client may pass as query
// parameters (kubectl does): gracePeriodSeconds, propagationPolicy,
// orphanDependents and dryRun. They override the body's.
func deleteQuery(r *http.Request, opts *metav1.DeleteOptions) error {
	q := r.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("gracePeriodSeconds: invalid value %q", v))
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if q.Has("orphanDependents") {
		b := queryBool(q, "orphanDependents")
		opts.OrphanDependents = &b //nolint:staticcheck // still honoured by Kubernetes
	}
	if dry := q["dryRun"]; len(dry) > 0 {
		opts.DryRun = dry
	}
	return nil
}

// checkDeleteOptionsKind refuses a JSON or YAML body naming a kind other
// than DeleteOptions as kube-apiserver's options scheme does (it knows the
// options kinds only).
func checkDeleteOptionsKind(body []byte) error {
	var tm metav1.TypeMeta
	if sigsyaml.Unmarshal(body, &tm) != nil || tm.Kind == "" || tm.Kind == "DeleteOptions" {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme %q", tm.Kind, tm.APIVersion, "pkg/runtime/scheme.go:111"))
}

// decodeAnyVersionDeleteOptions reads a JSON or YAML DeleteOptions body
// whatever its apiVersion; its kind must be DeleteOptions (or absent).
func decodeAnyVersionDeleteOptions(body []byte, opts *metav1.DeleteOptions) error {
	var tm metav1.TypeMeta
	if err := sigsyaml.Unmarshal(body, &tm); err != nil {
		return err
	}
	if tm.Kind != "" && tm.Kind != "DeleteOptions" {
		return fmt.Errorf("kind %q is not DeleteOptions", tm.Kind)
	}
	return sigsyaml.UnmarshalStrict(body, opts)
}
