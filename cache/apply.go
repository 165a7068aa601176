package cache

import "fmt"

// EventType is the kind of notification a batch turns into.
type EventType string

// The notification types.
const (
	EventAdd    EventType = "Add"
	EventUpdate EventType = "Update"
	EventDelete EventType = "Delete"
)

// Event is one per-object notification, produced by Apply after the store
// has been updated.
type Event[T any] struct {
	Type EventType
	Key  string
	// Old is the previous state for EventUpdate and the final state for
	// EventDelete (the tombstone's Obj when Tombstone is set).
	Old T
	// New is the new state for EventAdd and EventUpdate.
	New T
	// Tombstone is set on EventDelete when the deletion was inferred from a
	// relist and the final state is only the last one known.
	Tombstone *DeletedFinalStateUnknown[T]
	// Resync marks an EventUpdate produced by a Sync delta (Old == New).
	Resync bool
}

// Apply is the reference consumer step: it applies b to store and returns
// the notifications to dispatch afterwards, in delta order. A ReplaceBatch
// is applied with one store.Replace, so readers never see a half-applied
// relist; its listed objects become EventAdd or EventUpdate depending on
// whether store held them before, its tombstones EventDelete. A Sync delta
// does not write the store. The caller must be the store's only writer,
// else "before" states may be wrong.
func Apply[T any](store Store[T], b Batch[T]) ([]Event[T], error) {
	switch b.Kind {
	case EventBatch:
		return applyEvents(store, b.Deltas)
	case ReplaceBatch:
		return applyReplace(store, b)
	case ResyncBatch:
		events := make([]Event[T], 0, len(b.Deltas))
		for _, d := range b.Deltas {
			events = append(events, Event[T]{Type: EventUpdate, Key: d.Key, Old: d.Object, New: d.Object, Resync: true})
		}
		return events, nil
	}
	return nil, fmt.Errorf("cache: apply: unknown batch kind %d", b.Kind)
}

func applyEvents[T any](store Store[T], deltas []Delta[T]) ([]Event[T], error) {
	events := make([]Event[T], 0, len(deltas))
	for _, d := range deltas {
		old, existed, err := store.GetByKey(d.Key)
		if err != nil {
			return events, fmt.Errorf("cache: apply %s %q: %w", d.Type, d.Key, err)
		}
		if d.Type == Deleted {
			if err := store.Delete(d.Object); err != nil {
				return events, fmt.Errorf("cache: apply %s %q: %w", d.Type, d.Key, err)
			}
			events = append(events, Event[T]{Type: EventDelete, Key: d.Key, Old: d.Object, Tombstone: d.Tombstone})
			continue
		}
		if err := store.Update(d.Object); err != nil {
			return events, fmt.Errorf("cache: apply %s %q: %w", d.Type, d.Key, err)
		}
		events = append(events, addOrUpdate(d, old, existed))
	}
	return events, nil
}

func addOrUpdate[T any](d Delta[T], old T, existed bool) Event[T] {
	if existed {
		return Event[T]{Type: EventUpdate, Key: d.Key, Old: old, New: d.Object}
	}
	return Event[T]{Type: EventAdd, Key: d.Key, New: d.Object}
}

func applyReplace[T any](store Store[T], b Batch[T]) ([]Event[T], error) {
	type before struct {
		obj     T
		existed bool
	}
	olds := make([]before, len(b.Deltas))
	list := make([]T, 0, len(b.Deltas))
	for i, d := range b.Deltas {
		if d.Type == Deleted {
			continue
		}
		old, existed, err := store.GetByKey(d.Key)
		if err != nil {
			return nil, fmt.Errorf("cache: apply replace %q: %w", d.Key, err)
		}
		olds[i] = before{old, existed}
		list = append(list, d.Object)
	}
	if err := store.Replace(list, b.ResourceVersion); err != nil {
		return nil, fmt.Errorf("cache: apply replace at %q: %w", b.ResourceVersion, err)
	}
	events := make([]Event[T], 0, len(b.Deltas))
	for i, d := range b.Deltas {
		if d.Type == Deleted {
			events = append(events, Event[T]{Type: EventDelete, Key: d.Key, Old: d.Object, Tombstone: d.Tombstone})
			continue
		}
		events = append(events, addOrUpdate(d, olds[i].obj, olds[i].existed))
	}
	return events, nil
}
