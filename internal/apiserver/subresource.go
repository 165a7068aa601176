package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

func combineNameSelector(sel fields.Selector, name string) fields.Selector {
	byName := fields.OneTermEqualSelector("metadata.name", name)
	if sel == nil || sel.Empty() {
		return byName
	}
	return fields.AndSelectors(sel, byName)
}

func rawExt(b []byte) runtime.RawExtension { return runtime.RawExtension{Raw: b} }

// dispatchSubresource serves status and scale, and the kind's own
// subresources by their form: an Update view of the object, an Action, or a
// Connect forwarded elsewhere (connect.go).
func (s *Server) dispatchSubresource(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	sr := e.res.Subresource(info.Subresource)
	if info.Subpath != "" && (sr == nil || sr.Connect == nil || !sr.Connect.Subpath) {
		s.resp.writeError(w, r, resourceNotFound()) // only proxies take a path
		return
	}
	switch {
	case info.Subresource == "status" && e.res.Status != nil:
		s.handleObjectView(w, r, e, info, mt, []string{"get", "patch", "update"})
		return
	case info.Subresource == "scale" && e.res.Scale != nil:
		s.handleScale(w, r, e, info, mt)
		return
	}
	switch {
	case sr == nil:
		s.resp.writeError(w, r, resourceNotFound())
	case sr.Update != nil:
		s.handleObjectView(w, r, e, info, mt, sr.Verbs)
	case sr.Action != nil && info.Verb == "create":
		s.handleAction(w, r, e, info, mt, sr.Action)
	case sr.Connect != nil:
		s.handleConnect(w, r, e, info, sr.Connect)
	default:
		s.resp.writeError(w, r, methodNotAllowed())
	}
}

// handleObjectView serves a subresource that reads and writes the object
// itself through its own strategy (status, finalize, …): the verbs it
// allows, else 405.
func (s *Server) handleObjectView(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType, verbs []string) {
	if !slices.Contains(verbs, info.Verb) {
		s.resp.writeError(w, r, methodNotAllowed())
		return
	}
	switch info.Verb {
	case "get":
		s.handleGet(w, r, e, info, mt)
	case "update":
		s.handleUpdate(w, r, e, info, mt)
	case "patch":
		s.handlePatch(w, r, e, info, mt)
	}
}

// handleAction serves a POST to an Action subresource: the body, decoded
// into the action's type, is handed to the kind, whose answer is sent with
// 201 Created.
func (s *Server) handleAction(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType, a *registry.Action) {
	dry, body, err := s.readWrite(r, createOptions)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	in, err := s.decodeActionBody(r, a, body)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.auditRequestObject(r, e, in, false)
	out, err := a.Do(r.Context(), s.env(), s.hookRequest(r, info, dry), in)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.resp.writeObject(w, r, http.StatusCreated, mediaType{Type: mt.Type}, out)
}

// decodeActionBody decodes an Action's body: of the type NewBody returns,
// or of one of the further versions it Accepts (decoded as that version's
// type). A body of another kind is a 400, as kube-apiserver refuses it.
func (s *Server) decodeActionBody(r *http.Request, a *registry.Action, body []byte) (runtime.Object, error) {
	in := a.NewBody()
	gvks, _, err := s.codecs.Scheme.ObjectKinds(in)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	want := gvks[0]
	dec, err := s.optionsDecoder(r)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := dec.Decode(body, &want, in)
	if err != nil {
		if len(strings.TrimSpace(string(body))) == 0 {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (<empty>)", want.Kind, err))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid %s: %v", want.Kind, err))
	}
	if gvk != nil && *gvk != want && !slices.Contains(a.Accepts, *gvk) {
		internal := want.Group
		if internal == "" {
			internal = "core"
		}
		internal, _, _ = strings.Cut(internal, ".")
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s) to (%s.%s): unknown conversion",
			gvk.Kind, gvk.Version, want.Kind, reflect.TypeOf(obj).Elem(), internal, want.Kind))
	}
	return obj, nil
}

// hookRequest describes a request to the registry's hooks.
func (s *Server) hookRequest(r *http.Request, info requestInfo, dry bool) registry.Request {
	return registry.Request{
		Namespace: info.Namespace, Name: info.Name, User: registry.UserFrom(r.Context()),
		DryRun: dry, Query: r.URL.Query(), Subpath: info.Subpath,
	}
}

var scaleGVK = objects.ScaleGVK

// scaleOf renders the Scale view of obj.
func (s *Server) scaleOf(e *entry, obj runtime.Object) (*autoscalingv1.Scale, error) {
	sc, err := objects.ScaleOf(e.res, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return sc, nil
}

// handleScale serves get, update and patch of the scale subresource; writes
// change spec.replicas of the main object through its full update path.
func (s *Server) handleScale(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	if info.Verb == "get" {
		obj, err := e.store.Get(r.Context(), info.Namespace, info.Name)
		if err == nil {
			var sc *autoscalingv1.Scale
			if sc, err = s.scaleOf(e, obj); err == nil {
				s.resp.writeObject(w, r, http.StatusOK, mt, sc)
				return
			}
		}
		s.resp.writeError(w, r, err)
		return
	}
	if info.Verb != "update" && info.Verb != "patch" {
		s.resp.writeError(w, r, methodNotAllowed())
		return
	}
	var dry bool
	var body []byte
	var p *patcher
	var manager string
	var err error
	if info.Verb == "patch" {
		p, manager, dry, err = s.readPatch(r, e, &autoscalingv1.Scale{})
	} else if dry, body, err = s.readWrite(r, updateOptions); err == nil {
		manager, err = writeManager(r, updateOptions)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	if body != nil && audit.LevelFrom(r.Context()) != audit.LevelNone {
		if sent := (&autoscalingv1.Scale{}); s.decodeOptionsBody(r, body, &scaleGVK, sent) == nil {
			audit.LogRequestObject(r.Context(), sent, e.res.GVR(), info.Subresource, s.resp.auditEncoder)
		}
	}
	fn := func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, apierrors.NewNotFound(e.gr(), info.Name)
		}
		cur, want, err := s.desiredScale(r, e, current, p, body)
		if err != nil {
			return nil, err
		}
		obj := current.DeepCopyObject()
		m := objectMeta(obj)
		m.SetResourceVersion(want.ResourceVersion) // a Scale naming a resourceVersion is conditional
		if err := e.res.Scale.SetReplicas(obj, want.Spec.Replicas); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return e.fm.UpdateScale(current, obj, cur, want, manager), nil
	}
	out, _, err := e.store.Update(r.Context(), info.Namespace, info.Name, fn, objects.UpdateOptions{WriteOptions: objects.WriteOptions{DryRun: dry}, Subresource: "scale"})
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	sc, err := s.scaleOf(e, out)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.resp.writeObject(w, r, http.StatusOK, mt, sc)
}

// desiredScale decodes the Scale a client sent (PUT) or patches the current
// Scale (PATCH), and validates it; it returns the current Scale too.
func (s *Server) desiredScale(r *http.Request, e *entry, current runtime.Object, p *patcher, body []byte) (cur, want *autoscalingv1.Scale, err error) {
	cur, err = s.scaleOf(e, current)
	if err != nil {
		return nil, nil, err
	}
	doc := body
	if p != nil {
		var buf bytes.Buffer
		if err := s.codecs.JSON.Encode(cur, &buf); err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		if doc, err = p.apply(buf.Bytes()); err != nil {
			return nil, nil, err
		}
	}
	want = &autoscalingv1.Scale{}
	if p != nil {
		_, _, err = s.codecs.JSON.Decode(doc, &scaleGVK, want)
	} else {
		err = s.decodeOptionsBody(r, doc, &scaleGVK, want)
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid Scale: %v", err))
	}
	if p != nil && !p.setsResourceVersion() {
		want.ResourceVersion = ""
	}
	if want.Name != "" && want.Name != cur.Name {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", want.Name, cur.Name))
	}
	if want.Spec.Replicas < 0 {
		return nil, nil, apierrors.NewInvalid(scaleGVK.GroupKind(), cur.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")})
	}
	return cur, want, nil
}
