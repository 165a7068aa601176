package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// selectors are the parsed labelSelector and fieldSelector parameters.
type selectors struct {
	label labels.Selector
	field fields.Selector
}

func parseSelectors(q url.Values) (selectors, error) {
	var sel selectors
	var err error
	if sel.label, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return sel, apierrors.NewBadRequest(err.Error()) // "unable to parse requirement: ..."
	}
	if sel.field, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return sel, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	return sel, nil
}

// checkFieldSelector refuses field selectors on fields the resource does
// not support, as kube-apiserver does in one of two ways. A kind with a
// field label conversion function (one with selectable fields beyond its
// metadata; every custom resource) names the label it does not support.
// The others accept metadata.name and metadata.namespace (cluster-scoped
// kinds too, where a namespace matches only "") and list those two.
func checkFieldSelector(e *entry, sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	metaOnly := !e.res.Unstructured && metadataFieldsOnly(e.fields)
	for _, req := range sel.Requirements() {
		if _, ok := e.fields[req.Field]; ok || (metaOnly && (req.Field == "metadata.name" || req.Field == "metadata.namespace")) {
			continue
		}
		switch {
		case e.res.FieldLabelError != nil:
			return apierrors.NewBadRequest(e.res.FieldLabelError(req.Field))
		case metaOnly:
			return apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q",
				req.Field, "metadata.name", "metadata.namespace"))
		default:
			return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return nil
}

// invalidResourceVersion is kube-apiserver's answer to a resourceVersion
// that is no unsigned integer.
func invalidResourceVersion(raw string) error {
	_, err := strconv.ParseUint(raw, 10, 64)
	if err == nil {
		err = fmt.Errorf("strconv.ParseUint: parsing %q: value out of range", raw)
	}
	return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: resourceVersion: Invalid value: %q: %v", raw, err))
}

// metadataFieldsOnly reports whether set holds no field but metadata.name
// and metadata.namespace.
func metadataFieldsOnly(set fields.Set) bool {
	for f := range set {
		if f != "metadata.name" && f != "metadata.namespace" {
			return false
		}
	}
	return true
}

// readVersion is a parsed resourceVersion / resourceVersionMatch pair.
type readVersion struct {
	// set is false for resourceVersion "" (a consistent read).
	set bool
	rv  int64
	// match is "", NotOlderThan or Exact.
	match metav1.ResourceVersionMatch
}

func parseReadVersion(q url.Values) (readVersion, error) {
	var v readVersion
	raw := q.Get("resourceVersion")
	v.match = metav1.ResourceVersionMatch(q.Get("resourceVersionMatch"))
	if raw != "" {
		n, ok := objects.ParseResourceVersion(raw)
		if !ok {
			return v, invalidResourceVersion(raw)
		}
		v.set, v.rv = true, n
	}
	var errs field.ErrorList
	p := field.NewPath("resourceVersionMatch")
	switch v.match {
	case "":
	case metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
		if !v.set {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		} else if v.match == metav1.ResourceVersionMatchExact && v.rv == 0 {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
		}
		if q.Get("continue") != "" {
			errs = append(errs, field.Forbidden(p, "resourceVersionMatch is forbidden when continue is provided"))
		}
	default:
		errs = append(errs, field.NotSupported(p, v.match, []string{"Exact", "NotOlderThan", ""}))
	}
	if len(errs) > 0 {
		return v, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "", errs)
	}
	return v, nil
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	v, err := parseReadVersion(r.URL.Query())
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	var obj runtime.Object
	if !v.set {
		obj, err = e.store.Get(r.Context(), info.Namespace, info.Name)
	} else {
		obj, err = s.cachedGet(r.Context(), e, info, v.rv)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusOK, mt, e, obj)
}

// cachedGet serves a get at resourceVersion "0" or "not older than rv"
// from the watch cache.
func (s *Server) cachedGet(ctx context.Context, e *entry, info requestInfo, rv int64) (runtime.Object, error) {
	if rv > 0 {
		if err := e.cache.WaitForRevision(ctx, rv); err != nil {
			return nil, err
		}
	}
	obj, ok, _, err := e.cache.Get(e.res.Key(info.Namespace, info.Name))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(e.gr(), info.Name)
	}
	return obj, nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	q := r.URL.Query()
	v, err := parseReadVersion(q)
	if err == nil && q.Has("sendInitialEvents") {
		err = apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "", field.ErrorList{
			field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list")})
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	sel, err := parseSelectors(q)
	if err == nil {
		err = checkFieldSelector(e, sel.field)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	var limit int64
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.ParseInt(l, 10, 64); err != nil {
			s.resp.writeError(w, r, apierrors.NewBadRequest(err.Error()))
			return
		}
		limit = max(limit, 0) // as kube-apiserver: a negative limit is no limit
	}
	cont := q.Get("continue")
	if err := checkContinue(e, info, cont, q.Get("resourceVersion")); err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	if cont != "" && v.set && v.rv == 0 {
		// As kube-apiserver, whose watch cache ignores the limit of a
		// resourceVersion "0" list: a continued one gives the rest of the
		// list at the token's revision, with no further token.
		limit = 0
	}
	var list runtime.Object
	switch {
	case cont != "" || (limit > 0 && !v.set) || v.match == metav1.ResourceVersionMatchExact || (limit > 0 && v.set && v.rv > 0 && v.match == ""):
		// Paginated and exact reads, at one revision.
		if streamsList(r, mt, e) {
			served, serr := s.streamPagedList(w, r, e, info, v, sel, limit, cont, mt)
			if served && serr == nil {
				return
			}
			if serr != nil && !s.itemListFailed(e, serr) {
				err = serr
				break
			}
		}
		list, err = s.pagedList(r.Context(), e, info, v, sel, limit, cont)
	case streamsList(r, mt, e):
		if err = s.streamCachedList(w, r, e, info, v, sel, mt); err == nil {
			return
		}
		if s.itemListFailed(e, err) {
			list, err = s.cachedList(r.Context(), e, info, v, sel)
		}
	default:
		list, err = s.cachedList(r.Context(), e, info, v, sel)
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.writeResult(w, r, http.StatusOK, mt, e, list)
}

// cachedList serves a list from the watch cache: a consistent one (after
// the cache has caught up with storage's current revision), one at any
// revision ("0"), or one not older than a revision.
func (s *Server) cachedList(ctx context.Context, e *entry, info requestInfo, v readVersion, sel selectors) (runtime.Object, error) {
	items, rev, err := s.cachedItems(ctx, e, info, v, sel)
	if err != nil {
		return nil, err
	}
	objs := make([]runtime.Object, len(items))
	for i, it := range items {
		objs[i] = it.Object()
	}
	return e.store.NewListFrom(objs, rev, "")
}

// streamCachedList is cachedList written from the items' shared encodings
// (liststream.go). An error is returned before anything was written.
func (s *Server) streamCachedList(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, v readVersion, sel selectors, mt mediaType) error {
	items, rev, err := s.cachedItems(r.Context(), e, info, v, sel)
	if err != nil {
		return err
	}
	empty, err := e.store.NewListFrom(nil, rev, "")
	if err != nil {
		return err
	}
	return s.writeItemList(w, mt, empty, items)
}

// cachedItems reads the items of a list from the watch cache, once it is
// current to the revision the list asks for.
func (s *Server) cachedItems(ctx context.Context, e *entry, info requestInfo, v readVersion, sel selectors) ([]watchcache.Item, int64, error) {
	want := v.rv
	if !v.set {
		cur, err := s.cfg.Storage.CurrentRevision(ctx)
		if err != nil {
			return nil, 0, apierrors.NewInternalError(err)
		}
		want = cur
	}
	if want > 0 {
		if err := e.cache.WaitForRevision(ctx, want); err != nil {
			return nil, 0, err
		}
	}
	return e.cache.ListItems(watchcache.ListOptions{Namespace: info.Namespace, Label: sel.label, Field: sel.field})
}

// listItems returns the items of a list object.
func listItems(list runtime.Object) ([]runtime.Object, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return items, nil
}
