package storagetest

import (
	"slices"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// model is the reference the metamorphic test holds stores to: as simple as
// possible, not efficient. It keeps the full event log and derives every
// past state by replaying it.
type model struct {
	rev       int64 // revision of the last event (0: none)
	compacted int64
	log       []storage.Event // every event, in revision order
}

// apply appends a successful write's event.
func (m *model) apply(e storage.Event) {
	m.log = append(m.log, e)
	m.rev = e.Revision
}

// stateAt replays the log up to rev.
func (m *model) stateAt(rev int64) map[string]storage.KeyValue {
	state := make(map[string]storage.KeyValue)
	for _, e := range m.log {
		if e.Revision > rev {
			break
		}
		if e.Type == storage.EventDelete {
			delete(state, e.Key)
			continue
		}
		created := e.Revision
		if !e.Created {
			created = state[e.Key].CreateRevision
		}
		state[e.Key] = storage.KeyValue{Key: e.Key, Value: e.Value, CreateRevision: created, ModRevision: e.Revision}
	}
	return state
}

func (m *model) current(key string) (storage.KeyValue, bool) {
	kv, ok := m.stateAt(m.rev)[key]
	return kv, ok
}

// eventsAfter returns the events under prefix with revisions > after.
func (m *model) eventsAfter(prefix string, after int64) []storage.Event {
	var out []storage.Event
	for _, e := range m.log {
		if e.Revision > after && strings.HasPrefix(e.Key, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// sortedKVs returns the keys of state under prefix in key order.
func sortedKVs(state map[string]storage.KeyValue, prefix string) []storage.KeyValue {
	var out []storage.KeyValue
	for k, kv := range state {
		if strings.HasPrefix(k, prefix) {
			out = append(out, kv)
		}
	}
	slices.SortFunc(out, func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return out
}
