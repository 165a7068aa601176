package apiserver

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// pagedList serves a list bound to one revision: a first page (limit, no
// resourceVersion: a consistent read), a continued page (at the token's
// revision), or an exact read (resourceVersionMatch Exact, or a limit with
// a resourceVersion other than "0"). As kube-apiserver since 1.33, it comes
// from the watch cache when the cache can give the state at that revision
// (a consistent first page after the cache caught up with storage; a page
// at an older revision, not compacted, while nothing under the resource
// changed since); otherwise from storage, which answers an expired
// continue token with 410 Gone.
func (s *Server) pagedList(ctx context.Context, e *entry, info requestInfo, v readVersion, sel selectors, limit int64, cont string) (runtime.Object, error) {
	page, served, err := s.cachedPage(ctx, e, info, v, limit, cont, sel)
	if err != nil {
		return nil, err
	}
	if served {
		return s.pageList(e, info, sel, page)
	}
	return e.store.List(ctx, objects.ListOptions{
		Namespace: info.Namespace, Label: sel.label, Field: sel.field, Revision: v.rv, Limit: limit, Continue: cont,
	})
}

// checkContinue refuses a continue token that does not decode, then one
// sent with a resourceVersion other than "0", as kube-apiserver's storage
// (and its watch cache, which validates the same way) does before reading:
// the token alone names the revision.
func checkContinue(e *entry, info requestInfo, cont, rv string) error {
	if cont == "" {
		return nil
	}
	if _, _, err := e.store.ParseContinue(info.Namespace, cont); err != nil {
		return err
	}
	if rv != "" && rv != "0" {
		return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	return nil
}

// streamPagedList is pagedList written from the items' shared encodings
// (liststream.go) when the page comes from the watch cache; served is
// false, and nothing written, when storage must answer. An error is
// returned before anything was written.
func (s *Server) streamPagedList(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, v readVersion, sel selectors, limit int64, cont string, mt mediaType) (served bool, err error) {
	page, served, err := s.cachedPage(r.Context(), e, info, v, limit, cont, sel)
	if err != nil || !served {
		return false, err
	}
	items := page.Entries
	page.Items, page.Entries = nil, nil
	empty, err := s.pageList(e, info, sel, page)
	if err != nil {
		return true, err
	}
	return true, s.writeItemList(w, mt, empty, items)
}

// cachedPage reads the page from the watch cache if the cache can give
// the state at the page's revision (served false otherwise).
func (s *Server) cachedPage(ctx context.Context, e *entry, info requestInfo, v readVersion, limit int64, cont string, sel selectors) (watchcache.Page, bool, error) {
	if e.cache == nil {
		return watchcache.Page{}, false, nil
	}
	popts := watchcache.PageOptions{
		ListOptions: watchcache.ListOptions{Namespace: info.Namespace, Label: sel.label, Field: sel.field},
		Limit:       int(limit),
	}

	consistent := false
	switch {
	case cont != "":
		rev, start, err := e.store.ParseContinue(info.Namespace, cont)
		if err != nil {
			return watchcache.Page{}, false, err
		}
		popts.StartKey = start
		// The token of an inconsistent continue (a negative revision)
		// reads the current state, as a consistent read.
		popts.Revision, consistent = max(rev, 0), rev < 0
	case !v.set:
		consistent = true
	default:
		popts.Revision = v.rv
	}
	if consistent {
		if served, err := s.cacheCurrent(ctx, e); !served || err != nil {
			return watchcache.Page{}, false, err
		}
	}
	if popts.Revision > 0 {
		// A revision storage has compacted away is not served, as
		// storage would not: a continue token that old is 410 Gone.
		compacted, err := s.cfg.Storage.CompactedRevision(ctx)
		if err != nil || popts.Revision < compacted {
			return watchcache.Page{}, false, nil
		}
	}
	return e.cache.Page(popts)
}

// cacheCurrent waits until the cache holds storage's current revision, for
// a consistent read; served is false when it cannot catch up, leaving the
// read to storage.
func (s *Server) cacheCurrent(ctx context.Context, e *entry) (served bool, err error) {
	cur, err := s.cfg.Storage.CurrentRevision(ctx)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if err := e.cache.WaitForRevision(ctx, cur); err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return false, nil
	}
	return true, nil
}

// pageList builds the list object of a page from the cache, with its
// continue token and, as kube-apiserver gives it when no selector is set,
// its remainingItemCount.
func (s *Server) pageList(e *entry, info requestInfo, sel selectors, page watchcache.Page) (runtime.Object, error) {
	if !page.More {
		return e.store.NewPageFrom(page.Items, page.Revision, "", nil)
	}
	next := e.store.ContinueAfter(info.Namespace, page.Revision, page.LastKey)
	var remaining *int64
	if (sel.label == nil || sel.label.Empty()) && (sel.field == nil || sel.field.Empty()) {
		n := page.Remaining
		remaining = &n
	}
	return e.store.NewPageFrom(page.Items, page.Revision, next, remaining)
}
