package cache

// DeltaType says what happened to an object.
type DeltaType string

// The delta types a Queue produces.
const (
	// Added: the watch reported the object created.
	Added DeltaType = "Added"
	// Updated: the watch reported the object changed.
	Updated DeltaType = "Updated"
	// Deleted: the watch reported the object deleted, or (with a
	// Tombstone) a relist no longer contained it.
	Deleted DeltaType = "Deleted"
	// Replaced: a relist contained the object.
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync re-delivers an unchanged known object.
	Sync DeltaType = "Sync"
)

// DeletedFinalStateUnknown marks an object that vanished while the watch
// was down: a relist lacked it, so its deletion and final state were never
// observed. Obj is the last state the queue knew of.
type DeletedFinalStateUnknown[T any] struct {
	Key string
	// Obj is the last known state; the zero T when ObjKnown is false (the
	// known-objects store listed the key but could no longer return it).
	Obj      T
	ObjKnown bool
}

// Delta is one change to one object.
type Delta[T any] struct {
	Type DeltaType
	// Key is the object's store key, always set.
	Key string
	// Object is the state after the change; for Deleted, the state at
	// deletion (for a tombstone, Tombstone.Obj).
	Object T
	// Tombstone is set only on Deleted deltas synthesized by Replace.
	Tombstone *DeletedFinalStateUnknown[T]
}

// BatchKind says which Queue call produced a Batch.
type BatchKind int

// The batch kinds.
const (
	// EventBatch holds exactly one Added, Updated or Deleted delta.
	EventBatch BatchKind = iota
	// ReplaceBatch holds a relist: Deleted deltas with tombstones for the
	// vanished objects (sorted by key), then one Replaced delta per listed
	// object in list order. It may hold no delta at all (an empty list
	// over an empty store) and still counts as a relist.
	ReplaceBatch
	// ResyncBatch holds one Sync delta per known object.
	ResyncBatch
)

func (k BatchKind) String() string {
	switch k {
	case EventBatch:
		return "event"
	case ReplaceBatch:
		return "replace"
	case ResyncBatch:
		return "resync"
	}
	return "unknown"
}

// Batch is the unit Pop delivers: everything the consumer must apply to the
// known-objects store before notifying anybody.
type Batch[T any] struct {
	Kind BatchKind
	// ResourceVersion is the version a ReplaceBatch was listed at.
	ResourceVersion string
	Deltas          []Delta[T]
}
