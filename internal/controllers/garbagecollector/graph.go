package garbagecollector

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// identity names one object: the coordinates of an owner reference plus
// the namespace. For an owner known only from references (a virtual
// node), Namespace is the namespace of the dependent that named it.
type identity struct {
	APIVersion, Kind, Name string
	UID                    types.UID
	Namespace              string
}

func (id identity) String() string {
	return fmt.Sprintf("%s/%s %s/%s (uid %s)", id.APIVersion, id.Kind, id.Namespace, id.Name, id.UID)
}

// groupKind is the reference's group and kind (the version may differ
// between references to one object).
func (id identity) groupKind() schema.GroupKind {
	gv, _ := schema.ParseGroupVersion(id.APIVersion)
	return schema.GroupKind{Group: gv.Group, Kind: id.Kind}
}

// refIdentity is the identity an owner reference of a dependent in
// namespace ns designates.
func refIdentity(ref metav1.OwnerReference, ns string) identity {
	return identity{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Namespace: ns}
}

// node is one object of the dependency graph. All of its fields are
// guarded by the graph's mutex: the graph builder writes them holding the
// write lock, workers read them holding the read lock.
type node struct {
	id identity
	// dependents are the nodes whose owners name this node's uid.
	dependents map[*node]struct{}
	// owners are the object's ownerReferences as last observed (nil for a
	// virtual node).
	owners []metav1.OwnerReference
	// virtual is true while the object is known only from references to
	// its uid and no informer event has shown it.
	virtual bool
	// beingDeleted: the object was observed with a deletionTimestamp; it
	// never turns false again.
	beingDeleted bool
	// deletingDependents: the object was observed being deleted with the
	// foregroundDeletion finalizer.
	deletingDependents bool
}

// graph is the dependency graph, keyed by uid. Only the graph builder
// goroutine mutates it (under mu's write lock).
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

// view is a consistent copy of what a worker needs from a node.
type view struct {
	id                              identity
	virtual, beingDeleted, deleting bool
	inGraph                         bool
	dependents                      []*node
	blocking                        []*node // dependents whose reference to the node blocks its deletion
	deletingDependentsOfDependents  bool    // some dependent is itself deleting its dependents
	dependentIDs                    []identity
}

// view returns a snapshot of n under the read lock.
func (g *graph) view(n *node) view {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v := view{id: n.id, virtual: n.virtual, beingDeleted: n.beingDeleted, deleting: n.deletingDependents,
		inGraph: g.nodes[n.id.UID] == n}
	for dep := range n.dependents {
		v.dependents = append(v.dependents, dep)
		v.dependentIDs = append(v.dependentIDs, dep.id)
		if dep.deletingDependents {
			v.deletingDependentsOfDependents = true
		}
		for _, ref := range dep.owners {
			if ref.UID == n.id.UID && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				v.blocking = append(v.blocking, dep)
				break
			}
		}
	}
	return v
}

// lookup returns the node of uid, if any.
func (g *graph) lookup(uid types.UID) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// isDeletingDependents reports n's flag under the read lock.
func (g *graph) isDeletingDependents(n *node) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return n.deletingDependents
}
