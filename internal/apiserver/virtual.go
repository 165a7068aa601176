package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// handleVirtual serves a resource whose objects are not stored
// (registry.Virtual): a create is decoded, given the request's namespace,
// its manager recorded in managedFields, defaulted and validated by the
// kind's strategy (when it has one) and answered by the kind (201); get and
// list are answered by the kind; every other verb is 405.
func (s *Server) handleVirtual(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	v := e.res.Virtual
	req := s.hookRequest(r, info, false)
	switch {
	case mt.As == "Table" && e.res.Table == nil:
		// As kube-apiserver: a resource whose storage renders no Table
		// (the reviews) cannot be negotiated as one.
		s.resp.writeError(w, r, newStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"))
	case info.Subresource != "", info.Name != "" && v.Get == nil:
		s.resp.writeError(w, r, resourceNotFound())
	case info.Verb == "watch" && v.List != nil:
		err := newStatusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
			fmt.Sprintf("watch is not supported on resources of kind %q", e.res.Resource))
		err.ErrStatus.Details = &metav1.StatusDetails{Kind: e.res.Resource}
		s.resp.writeError(w, r, err)
	case info.Verb == "create" && info.Name == "" && v.Create != nil:
		dry, obj, err := s.readObject(w, r, e, createOptions)
		var manager string
		if err == nil {
			manager, err = writeManager(r, "CreateOptions")
		}
		if err == nil {
			err = matchRequestNamespace(objectMeta(obj), info.Namespace)
		}
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		req.DryRun = dry
		if e.fm != nil {
			// As kube-apiserver: the created object (a review answered with
			// its own body) records its manager like any create.
			obj = e.fm.Update(nil, obj, manager, "")
		}
		if st := e.res.Strategy; st != nil {
			st.Default(obj)
			st.PrepareForCreate(obj)
			if errs := st.Validate(obj); len(errs) > 0 {
				s.resp.writeError(w, r, apierrors.NewInvalid(e.res.GVK().GroupKind(), objectMeta(obj).GetName(), errs))
				return
			}
		}
		out, err := v.Create(r.Context(), s.env(), req, obj)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		setKindIfUnset(out, e.res.GVK())
		s.writeResult(w, r, http.StatusCreated, mt, e, out)
	case info.Verb == "get" && v.Get != nil:
		out, err := v.Get(r.Context(), s.env(), req)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		setKindIfUnset(out, e.res.GVK())
		s.writeResult(w, r, http.StatusOK, mt, e, out)
	case info.Verb == "list" && v.List != nil:
		out, err := v.List(r.Context(), s.env(), req)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		setKindIfUnset(out, e.res.GroupVersion().WithKind(e.res.ListKind))
		s.writeResult(w, r, http.StatusOK, mt, e, out)
	default:
		s.resp.writeError(w, r, methodNotAllowed())
	}
}

// setKindIfUnset gives an object a hook returned its kind and apiVersion,
// as they are sent.
func setKindIfUnset(obj runtime.Object, gvk schema.GroupVersionKind) {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
}

// matchRequestNamespace gives obj the namespace of the request, as
// kube-apiserver does before a create: an unset namespace takes the URL's,
// a cluster-scoped request clears it, and a different one is a 400.
func matchRequestNamespace(obj metav1.Object, namespace string) error {
	switch got := obj.GetNamespace(); {
	case got == namespace:
	case got == "" || namespace == "":
		obj.SetNamespace(namespace)
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}
