package history

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/rest"
)

// maxCollisions bounds Create's renames; each collision is a different
// revision under our name, which needs a 32-bit hash collision.
const maxCollisions = 100

// maxConflicts bounds SetRevision's retries on conflict.
const maxConflicts = 10

// Client is the ControllerRevision client History writes through.
type Client = rest.Resource[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]

// History reads owners' revisions from a shared cache and writes them
// through the API server. It is safe for concurrent use.
type History struct {
	indexer *cache.ThreadSafeIndexer[*appsv1.ControllerRevision]
	client  *Client
}

// New returns a History over indexer (a ControllerRevision informer's) and
// client; it installs controllerref.ControllerUIDIndex on indexer.
func New(indexer *cache.ThreadSafeIndexer[*appsv1.ControllerRevision], client *Client) (*History, error) {
	if err := controllerref.AddControllerUIDIndex(indexer); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &History{indexer: indexer, client: client}, nil
}

// List returns the cached revisions in owner's namespace that match
// selector and are controlled by owner or by nothing. They are the cache's
// objects: do not modify them.
func (h *History) List(owner metav1.Object, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	cands, err := controllerref.Candidates(h.indexer, owner)
	if err != nil {
		return nil, fmt.Errorf("list revisions of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	var out []*appsv1.ControllerRevision
	for _, r := range cands {
		if r.Namespace == owner.GetNamespace() && selector.Matches(labels.Set(r.Labels)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Create creates rev (built by NewRevision) for owner. On a name taken by
// a revision with other data it increments *collisionCount and retries
// under the next name; a revision with the same data is returned as is.
func (h *History) Create(ctx context.Context, owner metav1.Object, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("history: create revision: collisionCount is nil")
	}
	c := h.client.Namespace(owner.GetNamespace())
	for range maxCollisions {
		clone := rev.DeepCopy()
		hash := Hash(rev.Data.Raw, collisionCount)
		clone.Name = Name(owner.GetName(), hash)
		clone.Namespace = owner.GetNamespace()
		clone.Labels[HashLabel] = hash
		created, err := c.Create(ctx, clone, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return nil, fmt.Errorf("create revision %s/%s: %w", clone.Namespace, clone.Name, err)
			}
			return created, nil
		}
		existing, err := c.Get(ctx, clone.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get existing revision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		if Equal(existing, clone) {
			return existing, nil
		}
		*collisionCount++
	}
	return nil, fmt.Errorf("create revision of %s/%s: %d name collisions", owner.GetNamespace(), owner.GetName(), maxCollisions)
}

// SetRevision sets rev's Revision to n (a rollback to an older snapshot
// makes it the newest), retrying on conflict with the server's copy.
func (h *History) SetRevision(ctx context.Context, rev *appsv1.ControllerRevision, n int64) (*appsv1.ControllerRevision, error) {
	c := h.client.Namespace(rev.Namespace)
	cur := rev.DeepCopy()
	for range maxConflicts {
		if cur.Revision == n {
			return cur, nil
		}
		cur.Revision = n
		updated, err := c.Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			return updated, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("update revision %s/%s: %w", rev.Namespace, rev.Name, err)
		}
		if cur, err = c.Get(ctx, rev.Name, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("get revision %s/%s: %w", rev.Namespace, rev.Name, err)
		}
	}
	return nil, fmt.Errorf("update revision %s/%s: %d conflicts", rev.Namespace, rev.Name, maxConflicts)
}

// Delete deletes rev (by name and UID); a revision already gone is not an
// error.
func (h *History) Delete(ctx context.Context, rev *appsv1.ControllerRevision) error {
	uid := rev.UID
	err := h.client.Namespace(rev.Namespace).Delete(ctx, rev.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return nil
}

// Adopt makes owner (of kind ownerKind) the controller of the orphan rev.
// It refuses a revision that has a controller.
func (h *History) Adopt(ctx context.Context, owner metav1.Object, ownerKind schema.GroupVersionKind, rev *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil {
		return nil, fmt.Errorf("adopt revision %s/%s: controlled by %s %s", rev.Namespace, rev.Name, ref.Kind, ref.Name)
	}
	patch, err := controllerref.AdoptPatch(owner, ownerKind, rev.UID)
	if err != nil {
		return nil, fmt.Errorf("adopt revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	out, err := h.client.Namespace(rev.Namespace).Patch(ctx, rev.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("adopt revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return out, nil
}

// Truncate deletes the oldest revisions of sorted (see Sort) that are not
// live until at most limit non-live revisions remain. live holds the names
// of revisions in use (current, update, those of existing pods).
func (h *History) Truncate(ctx context.Context, sorted []*appsv1.ControllerRevision, live map[string]bool, limit int) error {
	var old []*appsv1.ControllerRevision
	for _, r := range sorted {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	if len(old) <= limit {
		return nil
	}
	for _, r := range old[:len(old)-max(limit, 0)] {
		if err := h.Delete(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
