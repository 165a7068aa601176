package reflector

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// relistRV is the resourceVersion of the next list: "0" for the first one
// (any recent state; the server's watch cache answers), the last synced
// version afterwards (a state not older than what the sink holds), and ""
// (the newest state, read consistently) once the server said the last
// version is unavailable.
func (r *Reflector[T, L]) relistRV() string {
	if r.rvUnavailable {
		return ""
	}
	if rv := r.LastSyncResourceVersion(); rv != "" {
		return rv
	}
	return "0"
}

// list reads the whole collection and hands it to the sink with Replace.
// When the server no longer has the requested version (410, an expired
// continue token) or does not have it yet (too large), it lists again at
// once at the newest version.
func (r *Reflector[T, L]) list(ctx context.Context) error {
	rv := r.relistRV()
	readAt := rv
	items, listRV, err := r.listAll(ctx, rv)
	if err != nil && rv != "" && versionUnavailable(err) {
		r.log.Info("resourceVersion unavailable, listing the newest state", "resourceVersion", rv, "err", err)
		r.rvUnavailable = true
		readAt = ""
		items, listRV, err = r.listAll(ctx, "")
	}
	if err != nil {
		return fmt.Errorf("list %s at resourceVersion %q: %w", r.name, rv, err)
	}
	if err := r.sink.Replace(items, listRV); err != nil {
		return fmt.Errorf("replace %s with %d listed objects: %w", r.name, len(items), err)
	}
	r.rvUnavailable = false
	r.exactRV = ""
	if readAt != "" && readAt != "0" && (r.pageSizeSet || r.paginated) {
		r.exactRV = listRV
	}
	r.setLastSyncRV(listRV)
	r.setError(nil)
	r.log.Debug("listed", "objects", len(items), "resourceVersion", listRV)
	return nil
}

// listAll follows continue tokens until the list is complete and returns
// the items with the resourceVersion of the list. Pages are requested
// with Limit=PageSize, except for relists at a specific version when the
// server answered the first list whole (it serves from a watch cache:
// a Limit would force an exact read from storage, a needless load after
// server restarts and a likely 410).
func (r *Reflector[T, L]) listAll(ctx context.Context, rv string) ([]T, string, error) {
	opts := r.baseOptions()
	opts.ResourceVersion = rv
	opts.Limit = r.opts.PageSize
	if rv != "" && rv != "0" && !r.pageSizeSet && !r.paginated {
		opts.Limit = 0
	}
	var items []T
	for page := 0; ; page++ {
		list, err := r.lw.List(ctx, opts)
		if err != nil {
			return nil, "", fmt.Errorf("page %d: %w", page+1, err)
		}
		acc, err := meta.ListAccessor(list)
		if err != nil {
			return nil, "", fmt.Errorf("page %d: %T is not a list: %w", page+1, list, err)
		}
		if items, err = appendItems(items, list); err != nil {
			return nil, "", fmt.Errorf("page %d: %w", page+1, err)
		}
		next := acc.GetContinue()
		if page == 0 && rv == "0" {
			r.paginated = next != ""
		}
		if next == "" {
			return items, acc.GetResourceVersion(), nil
		}
		// Later pages come from the snapshot named by the token.
		opts.Continue, opts.ResourceVersion = next, ""
	}
}

// appendItems appends the items of list to items. A typed list holds its
// items in one array (PodList.Items []Pod), and meta.ExtractList gives
// pointers into it, so one item kept (say, a pod never updated) would keep
// the whole page alive, and the array's spare capacity with it. Each item
// is therefore copied into its own allocation; the page becomes garbage
// once listed.
func appendItems[T any](items []T, list runtime.Object) ([]T, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("extract items of %T: %w", list, err)
	}
	if items == nil {
		items = make([]T, 0, len(objs))
	}
	for i, o := range objs {
		t, ok := ownCopy(o).(T)
		if !ok {
			var zero T
			return nil, fmt.Errorf("item %d of %T is a %T, want %T", i, list, o, zero)
		}
		items = append(items, t)
	}
	return items, nil
}

// ownCopy returns a pointer to a shallow copy of what the pointer o points
// to (o itself when it is not a non-nil pointer). The copy shares o's
// slices, maps and strings, which belong to the item alone.
func ownCopy(o runtime.Object) runtime.Object {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return o
	}
	cp := reflect.New(v.Type().Elem())
	cp.Elem().Set(v.Elem())
	if out, ok := cp.Interface().(runtime.Object); ok {
		return out
	}
	return o
}

// versionUnavailable tells whether err says the requested resourceVersion
// (or continue token) is gone or not reached yet.
func versionUnavailable(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || isTooLargeRV(err)
}

// isTooLargeRV recognises Kubernetes' "Too large resource version" answer:
// a Status whose details carry the ResourceVersionTooLarge cause.
func isTooLargeRV(err error) bool {
	return apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

// typeName names T for logs when Options.Name is empty.
func typeName(obj any) string {
	t := reflect.TypeOf(obj)
	if t == nil {
		return "objects"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
