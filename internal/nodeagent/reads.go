package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// How long a dependency check waits for a new object watch's first list,
// polling, before it reports the kubelet's "failed to sync … cache" error
// (the kubelet's watch-based manager waits a second, every 10ms).
const (
	objectSyncWait = time.Second
	objectSyncPoll = 10 * time.Millisecond
)

// The back-off of a pod waiting for a dependency on a node reading as
// itself: the kubelet's volume operation back-off, 500ms doubling to
// 2m2s.
const (
	depRetryBase = 500 * time.Millisecond
	depRetryMax  = 2*time.Minute + 2*time.Second
)

// depRetry returns the wait before the pod's dependencies are read again,
// 0 when a look is already due: the back-off grows with the looks it
// scheduled, not with the syncs other changes bring.
func (ps *podState) depRetry(now time.Time) time.Duration {
	if now.Before(ps.depRetryAt) {
		return 0
	}
	if ps.depBackoff == 0 {
		ps.depBackoff = depRetryBase
	} else {
		ps.depBackoff = min(2*ps.depBackoff, depRetryMax)
	}
	ps.depRetryAt = now.Add(ps.depBackoff)
	return ps.depBackoff
}

// depView returns what the pod's dependency checks read: the shared
// informers, or what its node reads as itself (registering the pod's
// object watches with the node, dropping any it had elsewhere). It is nil
// when no check will run (deleted or finished pod, checks off).
func (a *Agent) depView(ctx context.Context, n *node, key types.NamespacedName, pod *corev1.Pod) depView {
	if n.reads == nil {
		return a.deps
	}
	if a.opts.IgnoreMissingDependencies || pod.DeletionTimestamp != nil || isTerminal(pod.Status.Phase) {
		return nil
	}
	a.mu.Lock()
	if at := a.refsAt[key]; at != n {
		a.releaseRefsLocked(key)
		a.refsAt[key] = n
	}
	a.mu.Unlock()
	return n.reads.view(ctx, key, pod, pod.Status.PodIP == "")
}

// releaseRefsLocked drops the object watch references of the pod.
func (a *Agent) releaseRefsLocked(key types.NamespacedName) {
	if n := a.refsAt[key]; n != nil {
		n.reads.release(key)
		delete(a.refsAt, key)
	}
}

// nodeReads is what one node reads with its own identity
// (Options.NodeCredentials), as a kubelet under the Node authorizer: its
// pods (list and watch with fieldSelector spec.nodeName=<node>), its Node
// (metadata.name=<node>), the ConfigMaps and Secrets its pods reference
// (one watch per object, objwatch.go), and, by get when a pod's volumes
// are set up, the pods' claims and ServiceAccounts.
type nodeReads struct {
	pods       *informer.Informer[*corev1.Pod]
	node       *informer.Informer[*corev1.Node]
	configMaps *objectWatches[*corev1.ConfigMap, *corev1.ConfigMapList]
	secrets    *objectWatches[*corev1.Secret, *corev1.SecretList]
	api        *nodeAPI
}

func newNodeReads(name string, api *nodeAPI, log *slog.Logger, changed func(string)) *nodeReads {
	c := api.client
	log = log.With("node", name)
	return &nodeReads{
		pods:       nodeInformer[*corev1.Pod, *corev1.PodList](c, podsGVR, true, "spec.nodeName="+name, log),
		node:       nodeInformer[*corev1.Node, *corev1.NodeList](c, nodesGVR, false, "metadata.name="+name, log),
		configMaps: newObjectWatches[*corev1.ConfigMap, *corev1.ConfigMapList](c, configMapsGVR, "configmap", log, changed),
		secrets:    newObjectWatches[*corev1.Secret, *corev1.SecretList](c, secretsGVR, "secret", log, changed),
		api:        api,
	}
}

// nodeInformer is an informer of one node's share of a collection.
func nodeInformer[T informer.Object, L runtime.Object](c *rest.Client, gvr schema.GroupVersionResource, namespaced bool,
	selector string, log *slog.Logger) *informer.Informer[T] {
	return informer.New[T, L](rest.For[T, L](c, gvr, namespaced), informer.Options[T]{
		Resource: gvr.GroupResource(), Logger: log,
		Reflector: reflector.Options{Name: gvr.Resource + "?" + selector,
			Selectors: func(lo *metav1.ListOptions) { lo.FieldSelector = selector }},
	})
}

// start runs the node's informers and lets its object watches start.
func (r *nodeReads) start(run func(func(context.Context)) bool) {
	run(r.pods.Run)
	run(r.node.Run)
	r.configMaps.start(run)
	r.secrets.start(run)
}

func (r *nodeReads) hasSynced() bool { return r.pods.HasSynced() && r.node.HasSynced() }

// release drops the pod's object references.
func (r *nodeReads) release(key types.NamespacedName) {
	r.configMaps.release(key)
	r.secrets.release(key)
}

// view registers the ConfigMaps and Secrets the pod needs (waiting up to a
// second for new watches' first lists) and, when its volumes are still to
// be set up, gets its claims and the ServiceAccount of its token volumes,
// with the node's client. The result answers the pod's dependency checks.
func (r *nodeReads) view(ctx context.Context, key types.NamespacedName, pod *corev1.Pod, volumes bool) *nodeView {
	cms, secrets := neededObjects(pod)
	infs := r.configMaps.register(key, cms)
	sinfs := r.secrets.register(key, secrets)
	synced := func() bool {
		for _, i := range infs {
			if !i.HasSynced() {
				return false
			}
		}
		for _, i := range sinfs {
			if !i.HasSynced() {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(objectSyncWait); !synced() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(objectSyncPoll)
	}
	v := &nodeView{r: r, pvcs: map[string]pvcResult{}, sas: map[string]error{}}
	if !volumes {
		return v
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if c := vol.PersistentVolumeClaim; c != nil {
			if _, done := v.pvcs[c.ClaimName]; !done {
				pvc, err := r.api.pvcs.Namespace(pod.Namespace).Get(ctx, c.ClaimName, metav1.GetOptions{})
				v.pvcs[c.ClaimName] = pvcResult{pvc, err}
			}
		}
		if p := vol.Projected; p != nil {
			for _, s := range p.Sources {
				if s.ServiceAccountToken == nil {
					continue
				}
				sa := tokenServiceAccount(pod)
				if _, done := v.sas[sa]; !done {
					_, err := r.api.serviceAccounts.Namespace(pod.Namespace).Get(ctx, sa, metav1.GetOptions{})
					v.sas[sa] = err
				}
			}
		}
	}
	return v
}

// neededObjects are the ConfigMaps and Secrets the pod cannot run
// without: those its volumes, projected sources, and containers' env and
// envFrom reference, optional ones left out (they never block).
func neededObjects(pod *corev1.Pod) (cms, secrets []string) {
	add := func(list *[]string, name string, optional *bool) {
		if name != "" && !isTrue(optional) && !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			add(&cms, v.ConfigMap.Name, v.ConfigMap.Optional)
		case v.Secret != nil:
			add(&secrets, v.Secret.SecretName, v.Secret.Optional)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(&cms, s.ConfigMap.Name, s.ConfigMap.Optional)
				}
				if s.Secret != nil {
					add(&secrets, s.Secret.Name, s.Secret.Optional)
				}
			}
		}
	}
	visitEnv(&pod.Spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, ef := range envFrom {
			if ef.ConfigMapRef != nil {
				add(&cms, ef.ConfigMapRef.Name, ef.ConfigMapRef.Optional)
			}
			if ef.SecretRef != nil {
				add(&secrets, ef.SecretRef.Name, ef.SecretRef.Optional)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(&cms, r.Name, r.Optional)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(&secrets, r.Name, r.Optional)
			}
		}
	})
	return cms, secrets
}

// visitEnv calls fn with the env and envFrom of every init, regular and
// ephemeral container.
func visitEnv(spec *corev1.PodSpec, fn func([]corev1.EnvVar, []corev1.EnvFromSource)) {
	for i := range spec.InitContainers {
		fn(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		fn(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		fn(spec.EphemeralContainers[i].Env, spec.EphemeralContainers[i].EnvFrom)
	}
}

// tokenServiceAccount is the ServiceAccount whose token the pod's
// projected serviceAccountToken sources carry.
func tokenServiceAccount(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return pod.Spec.ServiceAccountName
	}
	return "default"
}

// pvcResult is a claim as a node's get found it.
type pvcResult struct {
	pvc *corev1.PersistentVolumeClaim
	err error
}

// nodeView answers one pod's dependency checks from what its node read
// (depView).
type nodeView struct {
	r    *nodeReads
	pvcs map[string]pvcResult
	sas  map[string]error
}

func (v *nodeView) configMap(ns, name string) (*corev1.ConfigMap, error) {
	return v.r.configMaps.get(ns, name)
}

func (v *nodeView) secret(ns, name string) (*corev1.Secret, error) { return v.r.secrets.get(ns, name) }

func (v *nodeView) pvc(_, name string) (*corev1.PersistentVolumeClaim, error) {
	res, ok := v.pvcs[name]
	if !ok { // view asks only before the volumes are set up
		return nil, fmt.Errorf("claim %q was not read", name)
	}
	return res.pvc, res.err
}

func (v *nodeView) serviceAccount(_, name string) error {
	err, ok := v.sas[name]
	if !ok {
		return fmt.Errorf("serviceaccount %q was not read", name)
	}
	return err
}

// podFor returns the pod of the key from the cache of the node it is bound
// to, and that node (nil when not ours).
func (a *Agent) podFor(key types.NamespacedName) (*corev1.Pod, *node, error) {
	if a.podInf != nil {
		pod, err := a.podInf.Lister().Namespace(key.Namespace).Get(key.Name)
		if err != nil {
			return nil, nil, err
		}
		return pod, a.byName[pod.Spec.NodeName], nil
	}
	a.pnMu.Lock()
	nodes := slices.Clone(a.podNodes[key])
	a.pnMu.Unlock()
	for _, n := range nodes {
		if pod, err := n.reads.pods.Lister().Namespace(key.Namespace).Get(key.Name); err == nil {
			return pod, n, nil
		}
	}
	return nil, nil, apierrors.NewNotFound(podsGVR.GroupResource(), key.Name)
}

// notePod records (seen) or forgets that node n's cache holds the pod.
func (a *Agent) notePod(n *node, key types.NamespacedName, seen bool) {
	a.pnMu.Lock()
	defer a.pnMu.Unlock()
	nodes := a.podNodes[key]
	i := slices.Index(nodes, n)
	switch {
	case seen && i < 0:
		a.podNodes[key] = append(nodes, n)
	case !seen && i >= 0:
		if nodes = slices.Delete(nodes, i, i+1); len(nodes) == 0 {
			delete(a.podNodes, key)
		} else {
			a.podNodes[key] = nodes
		}
	}
}

// podsOf lists the cached pods bound to n.
func (a *Agent) podsOf(n *node) []*corev1.Pod {
	if n.reads != nil {
		pods, _ := n.reads.pods.Lister().List(labels.Everything())
		return pods
	}
	pods, _ := a.podInf.Indexer().ByIndex(nodeIndex, n.name) // the index exists (New installs it)
	return pods
}

// nodeObject returns n's Node from the cache.
func (a *Agent) nodeObject(n *node) (*corev1.Node, error) {
	if n.reads != nil {
		return n.reads.node.Lister().Get(n.name)
	}
	return a.nodeInf.Lister().Get(n.name)
}
