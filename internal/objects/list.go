package objects

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// ListOptions selects what List reads from storage.
type ListOptions struct {
	// Namespace "" lists all namespaces (or a cluster-scoped kind).
	Namespace string
	Label     labels.Selector
	Field     fields.Selector
	// Revision reads at that exact revision (0: current).
	Revision int64
	// Limit is the page size (0: everything).
	Limit int64
	// Continue is the token of the previous page.
	Continue string
}

// continueToken is the opaque pagination state, in the same shape
// Kubernetes uses: the list's revision and the key to start from, relative
// to the resource's key prefix. A negative revision (latestRevision) asks
// for the current state: it is the token of the 410 answer to a token whose
// revision was compacted, continuing the list inconsistently.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// latestRevision is the revision of an inconsistent continue token, as
// kube-apiserver encodes it (0 would be an invalid token).
const latestRevision = -1

// inconsistentContinue is kube-apiserver's message for a continue token
// whose revision was compacted; the 410 carries a token at latestRevision.
const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
	"objects that were created, modified, or deleted between the time the first chunk was returned and now may " +
	"show up in the list."

func encodeContinue(rev int64, start string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(tok string) (continueToken, error) {
	var c continueToken
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return c, fmt.Errorf("continue key is not valid: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("continue key is not valid: %w", err)
	}
	if c.APIVersion != "meta.k8s.io/v1" || c.ResourceVersion == 0 || strings.Contains(c.StartKey, "..") {
		return c, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion or key")
	}
	return c, nil
}

// List reads a page from storage, filtered by the selectors. With a limit,
// it keeps reading storage pages until it has Limit matches or storage is
// exhausted, and returns a continue token bound to the list's revision and,
// as kube-apiserver when no selector filters, the remainingItemCount: the
// keys after the page at that revision. A continue token whose revision
// was compacted is 410 Expired carrying a token that continues from the
// same key at the current revision.
func (s *Store) List(ctx context.Context, opts ListOptions) (runtime.Object, error) {
	prefix := s.ListPrefix(opts.Namespace)
	rev, start := opts.Revision, ""
	var tokenStart string // where the continue token starts, for a 410's token
	if opts.Continue != "" {
		c, err := decodeContinue(opts.Continue)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid continue token: " + err.Error())
		}
		rev, start, tokenStart = max(c.ResourceVersion, 0), c.StartKey, c.StartKey
	}
	pageSize := int(opts.Limit)
	var items []runtime.Object
	var next string
	for {
		res, err := s.kv.List(ctx, prefix, storage.ListOptions{Revision: rev, StartKey: joinStart(prefix, start), Limit: pageSize,
			CountRemaining: noSelector(opts.Label, opts.Field)})
		if err != nil {
			if opts.Continue != "" && isCompacted(err) {
				return nil, inconsistentContinueError(tokenStart)
			}
			return nil, s.storageError(err, "")
		}
		rev = res.Revision
		var converted []runtime.Object
		if s.res.Converter != nil {
			if converted, err = s.decodeConvertedPage(ctx, res.KVs); err != nil {
				return nil, err
			}
		}
		for i, kv := range res.KVs {
			var obj runtime.Object
			if converted != nil {
				obj = converted[i]
			} else if obj, err = s.decode(ctx, kv); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if ok, err := s.Matches(obj, opts.Label, opts.Field); err != nil {
				return nil, apierrors.NewInternalError(err)
			} else if ok {
				items = append(items, obj)
			}
			start = strings.TrimPrefix(kv.Key, prefix) + "\x00"
			if opts.Limit > 0 && int64(len(items)) == opts.Limit {
				if i < len(res.KVs)-1 || res.More {
					next = encodeContinue(rev, start)
				}
				if next != "" && noSelector(opts.Label, opts.Field) {
					// Unfiltered, the page is one storage page of Limit keys.
					return s.NewPageFrom(items, rev, next, &res.Remaining)
				}
				return s.newList(items, rev, next)
			}
		}
		if !res.More || opts.Limit == 0 {
			return s.newList(items, rev, "")
		}
		// Filtered out too much: read a larger page next time.
		pageSize = min(pageSize*2, 10000)
	}
}

// inconsistentContinueError is the 410 answer to a continue token whose
// revision was compacted: it carries a token continuing from start (relative
// to the list's prefix) at the current revision.
func inconsistentContinueError(start string) error {
	err := apierrors.NewResourceExpired(inconsistentContinue)
	err.ErrStatus.ListMeta.Continue = encodeContinue(latestRevision, start)
	return err
}

// noSelector is true when neither selector filters anything.
func noSelector(label labels.Selector, field fields.Selector) bool {
	return (label == nil || label.Empty()) && (field == nil || field.Empty())
}

func joinStart(prefix, start string) string {
	if start == "" {
		return ""
	}
	return prefix + start
}

func isCompacted(err error) bool {
	var c *storage.CompactedError
	return errors.As(err, &c)
}

// Matches reports whether obj passes both selectors (nil selectors match).
func (s *Store) Matches(obj runtime.Object, label labels.Selector, field fields.Selector) (bool, error) {
	if noSelector(label, field) {
		return true, nil
	}
	ls, fs, err := s.res.Attrs(obj)
	if err != nil {
		return false, err
	}
	if label != nil && !label.Matches(ls) {
		return false, nil
	}
	return field == nil || field.Matches(fs), nil
}

// NewListFrom builds the resource's list object holding items at revision
// rev with continue token next.
func (s *Store) NewListFrom(items []runtime.Object, rev int64, next string) (runtime.Object, error) {
	return s.newList(items, rev, next)
}

// NewPageFrom is NewListFrom with the list's remainingItemCount (nil: not
// given).
func (s *Store) NewPageFrom(items []runtime.Object, rev int64, next string, remaining *int64) (runtime.Object, error) {
	list, err := s.newList(items, rev, next)
	if err != nil || remaining == nil {
		return list, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm.SetRemainingItemCount(remaining)
	return list, nil
}

func (s *Store) newList(items []runtime.Object, rev int64, next string) (runtime.Object, error) {
	list := s.res.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm.SetResourceVersion(strconv.FormatInt(rev, 10))
	lm.SetContinue(next)
	list.GetObjectKind().SetGroupVersionKind(s.gvk.GroupVersion().WithKind(s.res.ListKind))
	if !s.res.Unstructured {
		// As kube-apiserver: the items of a built-in kind's list carry no
		// apiVersion and kind (the list's say them). SetList copied the
		// items into the list, so the shared objects keep theirs.
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return nil
		}); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	return list, nil
}

// decodeConvertedPage decodes one storage page of a converted resource,
// converting its objects in one exchange.
func (s *Store) decodeConvertedPage(ctx context.Context, kvs []storage.KeyValue) ([]runtime.Object, error) {
	return s.decodeConverted(ctx, kvs)
}

// ListPrefix is the storage prefix a list of namespace ("" = all) reads,
// which continue tokens' start keys are relative to.
func (s *Store) ListPrefix(namespace string) string {
	if s.res.Namespaced && namespace != "" {
		return s.res.NamespacePrefix(namespace)
	}
	return s.res.KeyPrefix()
}

// ParseContinue decodes a continue token of a list of namespace: the
// revision it is bound to (negative: the current revision, for the token
// of an inconsistent continue) and the first storage key of the next page.
// An invalid token is a BadRequest, as List answers it.
func (s *Store) ParseContinue(namespace, token string) (int64, string, error) {
	c, err := decodeContinue(token)
	if err != nil {
		return 0, "", apierrors.NewBadRequest("invalid continue token: " + err.Error())
	}
	return c.ResourceVersion, s.ListPrefix(namespace) + c.StartKey, nil
}

// ContinueAfter is the continue token of a list of namespace at revision
// rev whose page ended with the object under storage key last.
func (s *Store) ContinueAfter(namespace string, rev int64, last string) string {
	return encodeContinue(rev, strings.TrimPrefix(last, s.ListPrefix(namespace))+"\x00")
}
