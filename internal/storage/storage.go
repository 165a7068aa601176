package storage

import (
	"context"
	"errors"
	"fmt"
)

// KeyValue is one key as stored at some revision.
type KeyValue struct {
	Key string
	// Value is owned by the caller once returned; the store never mutates it.
	Value []byte
	// CreateRevision is the revision at which the key was (last) created.
	CreateRevision int64
	// ModRevision is the revision of the last mutation of the key; it is the
	// object's resourceVersion.
	ModRevision int64
}

// EventType says what a watch event did to its key.
type EventType int

const (
	// EventPut is a create or an update. Event.Created tells them apart.
	EventPut EventType = iota
	// EventDelete removed the key; Event.PrevValue holds its last value.
	EventDelete
)

func (t EventType) String() string {
	switch t {
	case EventPut:
		return "PUT"
	case EventDelete:
		return "DELETE"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one mutation seen by a watcher.
type Event struct {
	Type EventType
	Key  string
	// Value is the new value (nil for EventDelete).
	Value []byte
	// PrevValue is the value before the mutation: nil for a create, the last
	// value for an update or a delete. Implementations must fill it for
	// deletes; for updates they may leave it nil (etcd only returns it on
	// request), and consumers that need it keep their own copy.
	PrevValue []byte
	// Revision is the revision of this mutation (the key's new ModRevision,
	// or for a delete the revision of the deletion).
	Revision int64
	// Created is true when an EventPut created the key.
	Created bool
}

// ListOptions narrows a List.
type ListOptions struct {
	// Revision reads the state as of this revision. 0 means the current
	// revision. A revision below the compacted revision fails with
	// ErrCompacted; one above the current revision fails with
	// ErrFutureRevision.
	Revision int64
	// StartKey, if set, lists keys >= StartKey only (for pagination: pass
	// the last key of the previous page with a "\x00" appended).
	StartKey string
	// Limit caps the number of returned keys; 0 means no limit.
	Limit int
	// CountRemaining asks for ListResult.Remaining. Backends that count
	// for free (etcd's range count) may fill it anyway; others count only
	// when asked, since a caller that filters the page has no use for it.
	CountRemaining bool
}

// ListResult is one page of a List.
type ListResult struct {
	// KVs are sorted by key. Never nil-vs-empty sensitive: an empty result
	// may be nil.
	KVs []KeyValue
	// Revision is the revision the list was read at (the current revision
	// when ListOptions.Revision was 0). Pass it back to read further pages
	// from the same snapshot.
	Revision int64
	// More is true when keys beyond the last returned one exist under the
	// prefix at Revision.
	More bool
	// Remaining is, when More and ListOptions.CountRemaining, how many
	// keys under the prefix follow the last returned one at Revision (etcd's range count less the page);
	// 0 when !More. The API server reports it as a page's
	// remainingItemCount.
	Remaining int64
}

// Reader reads current or past state.
type Reader interface {
	// Get returns the current value of key, or ErrNotFound.
	Get(ctx context.Context, key string) (KeyValue, error)
	// List returns the keys under prefix (a plain byte prefix: callers end
	// it with "/" to avoid matching siblings) as of opts.Revision.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Count returns how many keys are under prefix now.
	Count(ctx context.Context, prefix string) (int64, error)
	// CurrentRevision returns the revision of the last durable write (0 for
	// an empty store).
	CurrentRevision(ctx context.Context) (int64, error)
}

// Writer mutates keys with compare-and-swap on the revision.
type Writer interface {
	// Create stores value under key if key does not exist, else
	// ErrKeyExists. It returns the new revision.
	Create(ctx context.Context, key string, value []byte) (int64, error)
	// Update replaces the value of key if its ModRevision equals
	// expectedRevision. It returns ErrNotFound if the key is missing and a
	// *ConflictError (errors.Is ErrConflict; its Current field holds the
	// key's current KeyValue) if the revision differs. It returns the new
	// revision.
	Update(ctx context.Context, key string, value []byte, expectedRevision int64) (int64, error)
	// Delete removes key. expectedRevision 0 deletes unconditionally;
	// otherwise a different ModRevision gives ErrConflict. It returns the
	// revision of the deletion and the value that was deleted, or
	// ErrNotFound.
	Delete(ctx context.Context, key string, expectedRevision int64) (int64, KeyValue, error)
}

// Watcher streams mutations.
type Watcher interface {
	// Watch delivers every event on keys under prefix with a revision
	// greater than afterRevision, in revision order, on the returned
	// stream. afterRevision 0 means "from now" (so nothing watches from
	// before revision 1). If afterRevision is below the compacted revision
	// it fails with ErrCompacted; above the current revision, with
	// ErrFutureRevision. Event values are shared by every watcher that
	// receives the event: consumers treat them as read-only. The stream ends
	// (its channel is closed) when ctx is cancelled, the store closes, or
	// the watcher falls too far behind; Err tells which.
	Watch(ctx context.Context, prefix string, afterRevision int64) (WatchStream, error)
}

// WatchResponse is one delivery on a watch stream.
type WatchResponse struct {
	// Events are in revision order; several events may share a revision
	// only if one transaction wrote several keys (the built-in stores never
	// do). Empty for a progress notification.
	Events []Event
	// Revision: every event under the watched prefix with a revision <=
	// Revision has been delivered on this stream. For a batch of events it
	// is at least the last event's revision; a progress notification (no
	// events) carries the store's revision at the time it was sent.
	Revision int64
}

// WatchStream is one open watch.
type WatchStream interface {
	// Responses delivers events in revision order and progress
	// notifications. The channel is closed when the watch ends.
	Responses() <-chan WatchResponse
	// RequestProgress asks for a progress notification to be delivered soon
	// (after any events already due). Consumers use it to learn that they
	// are current with the store even when no key under their prefix
	// changed: the notification's revision is at least the revision
	// CurrentRevision reported before the request. Never blocks; a no-op
	// on an ended stream.
	RequestProgress()
	// Err is valid after Responses is closed: nil when the context was
	// cancelled or Stop was called, ErrWatcherTooSlow when the consumer fell
	// behind, ErrClosed when the store closed, or another error.
	Err() error
	// Stop ends the watch and releases its resources. Safe to call twice.
	Stop()
}

// Compactor discards history.
type Compactor interface {
	// Compact discards the history before revision rev: reads at revisions
	// < rev and watches from afterRevision < rev fail with ErrCompacted
	// afterwards. Compacting at or below the current compacted revision is a
	// no-op; above the current revision is ErrFutureRevision.
	Compact(ctx context.Context, rev int64) error
	// CompactedRevision returns the oldest revision still readable (0 when
	// nothing was ever compacted).
	CompactedRevision(ctx context.Context) (int64, error)
}

// Store is the whole contract the API server needs.
type Store interface {
	Reader
	Writer
	Watcher
	Compactor
	// Stats reports size figures for metrics.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the store; pending watches end with ErrClosed and
	// every later call returns ErrClosed. Calling Close twice is safe.
	Close() error
}

// Stats are size figures of a store.
type Stats struct {
	// Keys is the number of live keys.
	Keys int64
	// SizeBytes is the on-disk (or in-memory) size of the store.
	SizeBytes int64
}

var (
	ErrNotFound       = errors.New("storage: key not found")
	ErrKeyExists      = errors.New("storage: key already exists")
	ErrConflict       = errors.New("storage: revision conflict")
	ErrCompacted      = errors.New("storage: required revision has been compacted")
	ErrFutureRevision = errors.New("storage: required revision is in the future")
	ErrWatcherTooSlow = errors.New("storage: watcher fell too far behind")
	ErrClosed         = errors.New("storage: store is closed")
)

// ConflictError carries the current state of a key whose CAS failed.
type ConflictError struct {
	Key     string
	Current KeyValue
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("storage: revision conflict on %q (current revision %d)", e.Key, e.Current.ModRevision)
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// CompactedError says which revision is the oldest still available.
type CompactedError struct {
	Requested, Compacted int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("storage: revision %d has been compacted (oldest available %d)", e.Requested, e.Compacted)
}

// Unwrap makes errors.Is(err, ErrCompacted) true.
func (e *CompactedError) Unwrap() error { return ErrCompacted }

// FutureRevisionError says what the current revision is.
type FutureRevisionError struct {
	Requested, Current int64
}

func (e *FutureRevisionError) Error() string {
	return fmt.Sprintf("storage: revision %d is newer than the current revision %d", e.Requested, e.Current)
}

// Unwrap makes errors.Is(err, ErrFutureRevision) true.
func (e *FutureRevisionError) Unwrap() error { return ErrFutureRevision }
