package node

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Graph records which objects each node's kubelet may read: the pods
// bound to it and what they use, the persistent volumes of their claims
// and those volumes' secrets, the VolumeAttachments naming the node. It
// is what kube's Node authorizer graph holds, kept as counted indexes
// rather than a general graph: every path it answers is at most node ←
// pod ← claim ← volume ← secret. Safe for concurrent use.
type Graph struct {
	mu sync.RWMutex
	// pods are the bound pods by key, with their node and references.
	pods map[types.NamespacedName]podEntry
	// byRef counts, per object a pod uses and per node, the pods of that
	// node using it.
	byRef map[objKey]map[string]int
	// pvs are the persistent volumes bound to a claim.
	pvs map[string]pvEntry
	// pvsOfSecret lists the volumes naming a secret.
	pvsOfSecret map[types.NamespacedName]map[string]struct{}
	// attachments maps VolumeAttachments to their node.
	attachments map[string]string
	// owned maps the objects naming their node themselves (ResourceSlices,
	// PodCertificateRequests: spec.nodeName) to it.
	owned map[ownedKey]string
}

// ownedKey names an object that names its node.
type ownedKey struct {
	resource, namespace, name string
}

type podEntry struct {
	node string
	refs []ref
}

type pvEntry struct {
	claim   types.NamespacedName
	secrets [][2]string
}

// objKey names an object of a kind in a namespace.
type objKey struct {
	kind      kind
	namespace string
	name      string
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		pods: map[types.NamespacedName]podEntry{}, byRef: map[objKey]map[string]int{},
		pvs: map[string]pvEntry{}, pvsOfSecret: map[types.NamespacedName]map[string]struct{}{},
		attachments: map[string]string{}, owned: map[ownedKey]string{},
	}
}

// SetPod records pod as it is now: bound pods relate their references to
// their node; an unbound pod relates nothing.
func (g *Graph) SetPod(pod *corev1.Pod) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(key)
	if pod.Spec.NodeName == "" {
		return
	}
	e := podEntry{node: pod.Spec.NodeName, refs: podRefs(pod)}
	g.pods[key] = e
	for _, r := range e.refs {
		k := objKey{r.kind, pod.Namespace, r.name}
		m := g.byRef[k]
		if m == nil {
			m = map[string]int{}
			g.byRef[k] = m
		}
		m[e.node]++
	}
}

// DeletePod forgets the pod namespace/name.
func (g *Graph) DeletePod(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePodLocked(types.NamespacedName{Namespace: namespace, Name: name})
}

func (g *Graph) deletePodLocked(key types.NamespacedName) {
	e, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	for _, r := range e.refs {
		k := objKey{r.kind, key.Namespace, r.name}
		m := g.byRef[k]
		if m[e.node]--; m[e.node] <= 0 {
			delete(m, e.node)
		}
		if len(m) == 0 {
			delete(g.byRef, k)
		}
	}
}

// SetPV records a persistent volume: bound to a claim, it is readable by
// the nodes of the pods using that claim, and so are its secrets.
func (g *Graph) SetPV(pv *corev1.PersistentVolume) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(pv.Name)
	if pv.Spec.ClaimRef == nil {
		return
	}
	e := pvEntry{claim: types.NamespacedName{Namespace: pv.Spec.ClaimRef.Namespace, Name: pv.Spec.ClaimRef.Name},
		secrets: pvSecrets(pv)}
	g.pvs[pv.Name] = e
	for _, s := range e.secrets {
		k := types.NamespacedName{Namespace: s[0], Name: s[1]}
		if g.pvsOfSecret[k] == nil {
			g.pvsOfSecret[k] = map[string]struct{}{}
		}
		g.pvsOfSecret[k][pv.Name] = struct{}{}
	}
}

// DeletePV forgets the persistent volume name.
func (g *Graph) DeletePV(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deletePVLocked(name)
}

func (g *Graph) deletePVLocked(name string) {
	e, ok := g.pvs[name]
	if !ok {
		return
	}
	delete(g.pvs, name)
	for _, s := range e.secrets {
		k := types.NamespacedName{Namespace: s[0], Name: s[1]}
		delete(g.pvsOfSecret[k], name)
		if len(g.pvsOfSecret[k]) == 0 {
			delete(g.pvsOfSecret, k)
		}
	}
}

// SetVolumeAttachment records the node a VolumeAttachment attaches to.
func (g *Graph) SetVolumeAttachment(va *storagev1.VolumeAttachment) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if va.Spec.NodeName == "" {
		delete(g.attachments, va.Name)
		return
	}
	g.attachments[va.Name] = va.Spec.NodeName
}

// DeleteVolumeAttachment forgets the VolumeAttachment name.
func (g *Graph) DeleteVolumeAttachment(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.attachments, name)
}

// usedBy reports whether a pod of node uses the object.
func (g *Graph) usedByLocked(node string, k objKey) bool {
	return g.byRef[k][node] > 0
}

// pvRelatedLocked reports whether node may read the persistent volume.
func (g *Graph) pvRelatedLocked(node, name string) bool {
	e, ok := g.pvs[name]
	return ok && g.usedByLocked(node, objKey{kindPVC, e.claim.Namespace, e.claim.Name})
}

// PodOnNode reports whether the pod namespace/name is bound to node.
func (g *Graph) PodOnNode(node, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	e, ok := g.pods[types.NamespacedName{Namespace: namespace, Name: name}]
	return ok && e.node == node
}

// Related reports whether node's kubelet may read the object of kind in
// namespace (secrets also through the persistent volumes it may read).
func (g *Graph) related(node string, k kind, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.usedByLocked(node, objKey{k, namespace, name}) {
		return true
	}
	if k != kindSecret {
		return false
	}
	for pv := range g.pvsOfSecret[types.NamespacedName{Namespace: namespace, Name: name}] {
		if g.pvRelatedLocked(node, pv) {
			return true
		}
	}
	return false
}

// PVRelated reports whether node's kubelet may read the persistent volume.
func (g *Graph) PVRelated(node, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.pvRelatedLocked(node, name)
}

// AttachmentOnNode reports whether the VolumeAttachment name attaches to
// node.
func (g *Graph) AttachmentOnNode(node, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.attachments[name] == node
}

// SetNodeObject records that the object of resource (resourceslices,
// podcertificaterequests) namespace/name names node ("" forgets it).
func (g *Graph) SetNodeObject(resource, namespace, name, node string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := ownedKey{resource, namespace, name}
	if node == "" {
		delete(g.owned, k)
		return
	}
	g.owned[k] = node
}

// nodeObjectOn reports whether the object names node.
func (g *Graph) nodeObjectOn(node, resource, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.owned[ownedKey{resource, namespace, name}] == node
}
