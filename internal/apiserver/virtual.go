package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// handleVirtual serves a resource whose objects are not stored
// (registry.Virtual): a create is decoded, defaulted and validated by the
// kind's strategy (when it has one) and answered by the kind (201); get and
// list are answered by the kind; every other verb is 405.
func (s *Server) handleVirtual(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	v := e.res.Virtual
	req := s.hookRequest(r, info, false)
	switch {
	case info.Subresource != "":
		s.resp.writeError(w, r, resourceNotFound())
	case info.Verb == "create" && info.Name == "" && v.Create != nil:
		dry, obj, err := s.readObject(w, r, e, createOptions)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		req.DryRun = dry
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
		s.writeResult(w, r, http.StatusCreated, mt, e, out)
	case info.Verb == "get" && v.Get != nil:
		out, err := v.Get(r.Context(), s.env(), req)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		s.writeResult(w, r, http.StatusOK, mt, e, out)
	case info.Verb == "list" && v.List != nil:
		out, err := v.List(r.Context(), s.env(), req)
		if err != nil {
			s.resp.writeError(w, r, err)
			return
		}
		s.writeResult(w, r, http.StatusOK, mt, e, out)
	default:
		s.resp.writeError(w, r, methodNotAllowed(r.Method, e.res.Resource))
	}
}
