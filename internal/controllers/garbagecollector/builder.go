package garbagecollector

import (
	"slices"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"

	"github.com/setpoint-dev/setpoint/workqueue"
)

type eventType int

const (
	addEvent eventType = iota
	updateEvent
	deleteEvent
)

// objMeta is the part of an object the graph needs.
type objMeta struct {
	id         identity
	owners     []metav1.OwnerReference
	finalizers []string
	deleting   bool // deletionTimestamp is set
}

func (o *objMeta) waitingFor(finalizer string) bool {
	return o != nil && o.deleting && slices.Contains(o.finalizers, finalizer)
}

// event is one change for the graph builder: observed by an informer, or
// virtual (a delete the workers verified with a live GET).
type event struct {
	typ     eventType
	virtual bool
	obj     objMeta
	old     *objMeta // the previous state of an update; nil otherwise
}

// eventQueue is an unbounded FIFO of graph changes: informer handlers
// push, the graph builder pops. Order is kept; nothing is merged.
type eventQueue struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []event
	closed bool
}

func newEventQueue() *eventQueue {
	q := &eventQueue{}
	q.cond.L = &q.mu
	return q
}

func (q *eventQueue) push(ev event) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, ev)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// pop blocks for the next event; ok is false once the queue is closed.
func (q *eventQueue) pop() (ev event, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return event{}, false
	}
	ev = q.items[0]
	q.items[0] = event{}
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // let the backing array go
	}
	return ev, true
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

// builder applies events to the graph, one at a time in queue order, and
// feeds the workers' queues with the nodes that need attention.
type builder struct {
	g        *graph
	changes  *eventQueue
	toDelete *workqueue.RateLimitingQueue[*node]
	toOrphan *workqueue.RateLimitingQueue[*node]
	// absent remembers owners verified absent (bounded LRU, thread-safe),
	// so that siblings need not GET the same missing owner again.
	absent *lru.Cache
}

// run processes events until the queue closes.
func (b *builder) run() {
	for {
		ev, ok := b.changes.pop()
		if !ok {
			return
		}
		b.process(ev)
	}
}

// process applies one event; see the package documentation.
func (b *builder) process(ev event) {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	obj := &ev.obj
	existing, found := b.g.nodes[obj.id.UID]
	if found && !ev.virtual && existing.virtual {
		b.observe(existing, obj.id)
	}
	switch {
	case ev.typ != deleteEvent && !found:
		n := &node{id: obj.id, dependents: map[*node]struct{}{}, owners: obj.owners,
			beingDeleted: obj.deleting, deletingDependents: obj.waitingFor(metav1.FinalizerDeleteDependents)}
		b.g.nodes[n.id.UID] = n
		b.addDependentToOwners(n, n.owners)
		b.transitions(ev.old, obj, n)
	case ev.typ != deleteEvent:
		added, removed, changed := referenceDiffs(existing.owners, obj.owners)
		if len(added)+len(removed)+len(changed) > 0 {
			b.unblockOwners(removed, changed)
			existing.owners = obj.owners
			b.addDependentToOwners(existing, added)
			b.removeDependentFromOwners(existing, removed)
		}
		if obj.deleting {
			existing.beingDeleted = true
		}
		b.transitions(ev.old, obj, existing)
	case found:
		b.delete(existing, ev)
	}
}

// observe turns a virtual node into an observed one with the identity the
// informer reported. Dependents that named it with other coordinates are
// re-verified by the workers.
func (b *builder) observe(n *node, observed identity) {
	if n.id != observed {
		_, invalid := partitionDependents(n.dependents, observed)
		for _, dep := range invalid {
			b.toDelete.Add(dep)
		}
		n.id = observed
	}
	n.virtual = false
}

// transitions queues the work a deletion with a propagation finalizer
// asks for, once, when the object enters that state.
func (b *builder) transitions(old, cur *objMeta, n *node) {
	if cur.waitingFor(metav1.FinalizerOrphanDependents) && !old.waitingFor(metav1.FinalizerOrphanDependents) {
		b.toOrphan.Add(n)
		return
	}
	if cur.waitingFor(metav1.FinalizerDeleteDependents) && !old.waitingFor(metav1.FinalizerDeleteDependents) {
		n.deletingDependents = true
		for dep := range n.dependents {
			b.toDelete.Add(dep)
		}
		b.toDelete.Add(n)
	}
}

// delete handles a delete event: an observed one removes the node; a
// virtual one (the owner was not found) removes it unless some dependents
// name the uid with other coordinates, which are then tried instead.
func (b *builder) delete(n *node, ev event) {
	if ev.virtual && !b.removeAfterVirtualDelete(n, ev.obj.id) {
		return
	}
	delete(b.g.nodes, n.id.UID)
	for _, ref := range n.owners {
		if owner, ok := b.g.nodes[ref.UID]; ok {
			delete(owner.dependents, n)
		}
	}
	if len(n.dependents) > 0 {
		b.absent.Add(ev.obj.id, struct{}{})
	}
	for dep := range n.dependents {
		b.toDelete.Add(dep)
	}
	for _, ref := range n.owners {
		if owner, ok := b.g.nodes[ref.UID]; ok && owner.deletingDependents {
			b.toDelete.Add(owner) // maybe its last blocking dependent is gone
		}
	}
}

// removeAfterVirtualDelete reports whether n must be removed after the
// workers verified that the object with identity deleted does not exist.
func (b *builder) removeAfterVirtualDelete(n *node, deleted identity) (remove bool) {
	matching, nonmatching := partitionDependents(n.dependents, deleted)
	if n.virtual && len(nonmatching) == 0 {
		return true
	}
	if !n.virtual && sameID(n.id, deleted) {
		return true
	}
	if len(matching) > 0 {
		b.absent.Add(deleted, struct{}{})
		for _, dep := range matching {
			b.toDelete.Add(dep)
		}
	}
	if n.virtual && sameID(n.id, deleted) {
		if alt, ok := b.alternateIdentity(nonmatching, deleted); ok {
			n.id = alt
			b.toDelete.AddRateLimited(n)
		}
	}
	return false
}

// alternateIdentity picks, among the identities nonmatching dependents
// give the owner, the smallest one not already known absent.
func (b *builder) alternateIdentity(deps []*node, deleted identity) (identity, bool) {
	var cands []identity
	for _, dep := range deps {
		for _, ref := range dep.owners {
			if id := refIdentity(ref, dep.id.Namespace); ref.UID == deleted.UID && !sameID(id, deleted) && !has(b.absent, id) {
				cands = append(cands, id)
			}
		}
	}
	if len(cands) == 0 {
		return identity{}, false
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].String() < cands[j].String() })
	return cands[0], true
}

// addDependentToOwners links n under each owner of refs, creating virtual
// owners (queued for verification) for uids not in the graph. If an owner
// is known with coordinates that do not fit the reference, n itself is
// queued so that the workers verify its references.
func (b *builder) addDependentToOwners(n *node, refs []metav1.OwnerReference) {
	suspicious := false
	for _, ref := range refs {
		owner, ok := b.g.nodes[ref.UID]
		if !ok {
			owner = &node{id: refIdentity(ref, n.id.Namespace), dependents: map[*node]struct{}{}, virtual: true}
			b.g.nodes[ref.UID] = owner
			b.toDelete.Add(owner)
		}
		owner.dependents[n] = struct{}{}
		if !ok || suspicious {
			continue
		}
		namespaced := owner.id.Namespace != ""
		switch {
		case namespaced && owner.id.Namespace != n.id.Namespace:
			suspicious = true
		case !coordinatesMatch(ref, owner.id):
			suspicious = true
		case !namespaced && n.id.Namespace != "" && owner.virtual:
			suspicious = true // maybe a namespaced kind named by a cluster-scoped dependent
		}
	}
	if suspicious {
		b.toDelete.Add(n)
	}
}

func (b *builder) removeDependentFromOwners(n *node, refs []metav1.OwnerReference) {
	for _, ref := range refs {
		if owner, ok := b.g.nodes[ref.UID]; ok {
			delete(owner.dependents, n)
		}
	}
}

// unblockOwners queues owners deleting their dependents when a blocking
// reference to them was removed or stopped blocking.
func (b *builder) unblockOwners(removed []metav1.OwnerReference, changed []refChange) {
	queue := func(uid metav1.OwnerReference) {
		if owner, ok := b.g.nodes[uid.UID]; ok && owner.deletingDependents {
			b.toDelete.Add(owner)
		}
	}
	for _, ref := range removed {
		if blocks(ref) {
			queue(ref)
		}
	}
	for _, c := range changed {
		if blocks(c.old) && !blocks(c.cur) {
			queue(c.cur)
		}
	}
}

func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// coordinatesMatch reports whether ref names id: same uid, name, kind and
// group (versions may differ).
func coordinatesMatch(ref metav1.OwnerReference, id identity) bool {
	return ref.UID == id.UID && ref.Name == id.Name && refIdentity(ref, "").groupKind() == id.groupKind()
}

// partitionDependents splits deps into those whose reference to id's uid
// matches id and those whose reference does not (a dependent may be both).
func partitionDependents(deps map[*node]struct{}, id identity) (matching, nonmatching []*node) {
	for dep := range deps {
		match, mismatch := false, false
		if id.Namespace != "" && id.Namespace != dep.id.Namespace {
			mismatch = true
		} else {
			for _, ref := range dep.owners {
				if ref.UID != id.UID {
					continue
				}
				if coordinatesMatch(ref, id) {
					match = true
				} else {
					mismatch = true
				}
			}
		}
		if match {
			matching = append(matching, dep)
		}
		if mismatch {
			nonmatching = append(nonmatching, dep)
		}
	}
	return matching, nonmatching
}

// refChange is an owner reference present before and after with other
// fields (controller, blockOwnerDeletion, coordinates) changed.
type refChange struct{ old, cur metav1.OwnerReference }

// referenceDiffs compares two owner lists by uid.
func referenceDiffs(old, cur []metav1.OwnerReference) (added, removed []metav1.OwnerReference, changed []refChange) {
	if len(old) == 1 && len(cur) == 1 && old[0].UID == cur[0].UID {
		if !refEqual(old[0], cur[0]) {
			changed = append(changed, refChange{old[0], cur[0]})
		}
		return nil, nil, changed // the common case, without maps
	}
	before := make(map[string]metav1.OwnerReference, len(old))
	for _, r := range old {
		before[string(r.UID)] = r
	}
	for _, r := range cur {
		if o, ok := before[string(r.UID)]; ok {
			if !refEqual(o, r) {
				changed = append(changed, refChange{o, r})
			}
			delete(before, string(r.UID))
		} else {
			added = append(added, r)
		}
	}
	for _, r := range old {
		if _, ok := before[string(r.UID)]; ok {
			removed = append(removed, r)
		}
	}
	return added, removed, changed
}

func refEqual(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		blocks(a) == blocks(b) && (a.Controller != nil && *a.Controller) == (b.Controller != nil && *b.Controller)
}

// has reports whether the absent-owner cache holds id.
func has(c *lru.Cache, id identity) bool {
	_, ok := c.Get(id)
	return ok
}

// sameID compares an identity with one a worker verified absent; the
// latter has no namespace when the kind is cluster-scoped, and then the
// namespace a virtual node inherited from its dependent does not count.
func sameID(id, verified identity) bool {
	if verified.Namespace == "" {
		id.Namespace = ""
	}
	return id == verified
}
