package daemonset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile implements reconcile.Reconciler: one sync of one DaemonSet.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.Namespace + "/" + req.Name
	ds, err := r.dsInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.exp.DeleteExpectations(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get daemonset %s from cache: %w", key, err)
	}
	nodes, err := r.nodeInf.Lister().List(labels.Everything())
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("daemonset %s: nodes from cache: %w", key, err)
	}
	if ds.Spec.Selector == nil || reflect.DeepEqual(*ds.Spec.Selector, metav1.LabelSelector{}) {
		r.recorder.Eventf(ds, corev1.EventTypeWarning, ReasonSelectingAll, "This daemon set is selecting all pods. A non-empty selector is required.")
		return reconcile.Result{}, nil
	}
	// A DaemonSet being deleted may have lost its revisions (the garbage
	// collector orders nothing between them and the pods): its status
	// cannot be computed reliably, so leave it as it is.
	if ds.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	cur, old, err := r.constructHistory(ctx, ds)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("daemonset %s: revisions: %w", key, err)
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	// Read expectations before the pods: a pod observed in between is then
	// in the list acted on.
	if !r.exp.SatisfiedExpectations(key) {
		// Only the counts; observedGeneration waits for a sync that acted
		// on this generation.
		return reconcile.Result{}, r.syncStatus(ctx, ds, nodes, hash, false)
	}
	err = r.updateDaemonSet(ctx, ds, nodes, hash, old)
	statusErr := r.syncStatus(ctx, ds, nodes, hash, true)
	return reconcile.Result{}, errors.Join(err, statusErr)
}

// updateDaemonSet creates and deletes pods so that each eligible node runs
// one daemon pod, then (if nothing is outstanding) advances the rolling
// update, then prunes revisions beyond revisionHistoryLimit.
func (r *reconciler) updateDaemonSet(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string,
	old []*appsv1.ControllerRevision) error {
	pods, err := r.daemonPods(ctx, ds)
	if err != nil {
		return err
	}
	if err := r.manage(ctx, ds, nodes, nodeToPods(pods, false), hash); err != nil {
		return err
	}
	if r.exp.SatisfiedExpectations(keyOf(ds)) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := r.rollingUpdate(ctx, ds, nodes, nodeToPods(pods, false), hash); err != nil {
			return err
		}
	}
	if err := r.cleanupHistory(ctx, ds, old, nodeToPods(pods, true)); err != nil {
		return fmt.Errorf("clean up revisions of daemonset %s: %w", keyOf(ds), err)
	}
	return nil
}

// daemonPods returns the pods ds controls once it has adopted the matching
// orphans of its namespace and released the pods that stopped matching.
func (r *reconciler) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, reconcile.TerminalError(fmt.Errorf("daemonset %s: invalid selector: %w", keyOf(ds), err))
	}
	candidates, err := controllerref.Candidates(r.podInf.Indexer(), ds)
	if err != nil {
		return nil, fmt.Errorf("daemonset %s: pods from cache: %w", keyOf(ds), err)
	}
	claimer := controllerref.New(ds, dsGVK, sel, controllerref.PatchWith(r.pods),
		controllerref.RecheckDeletionTimestamp(ds, func(ctx context.Context) (metav1.Object, error) {
			return r.dss.Namespace(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		}))
	pods, err := claimer.Claim(ctx, candidates)
	if err != nil {
		// Acting on a partial claim could create a second pod on a node
		// whose orphan we failed to adopt.
		return nil, fmt.Errorf("daemonset %s: claim pods: %w", keyOf(ds), err)
	}
	return pods, nil
}

// nodeToPods groups pods by the node they are for (bound or targeted by
// their node affinity). Pods that finished and are being deleted are left
// out unless withDeletedTerminal: nothing more is to be done with them.
func nodeToPods(pods []*corev1.Pod, withDeletedTerminal bool) map[string][]*corev1.Pod {
	out := make(map[string][]*corev1.Pod, len(pods))
	for _, p := range pods {
		if !withDeletedTerminal && p.DeletionTimestamp != nil &&
			(p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) {
			continue
		}
		node := targetNode(p)
		if node == "" {
			continue
		}
		out[node] = append(out[node], p)
	}
	return out
}

// manage decides, node by node, which daemon pods to create and delete,
// and issues them.
func (r *reconciler) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node,
	byNode map[string][]*corev1.Pod, hash string) error {
	var need []string
	var del []*corev1.Pod
	for _, node := range nodes {
		n, d := r.podsShouldBeOnNode(node, byNode, ds, hash)
		need = append(need, n...)
		del = append(del, d...)
	}
	del = append(del, unscheduledPodsWithoutNode(nodes, byNode)...)
	return r.syncNodes(ctx, ds, del, need, hash)
}

// unscheduledPodsWithoutNode returns the pods not yet bound whose target
// node no longer exists: the scheduler could never place them.
func unscheduledPodsWithoutNode(nodes []*corev1.Node, byNode map[string][]*corev1.Pod) []*corev1.Pod {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	var out []*corev1.Pod
	for name, pods := range byNode {
		if exists[name] {
			continue
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// byAge orders daemon pods: bound ones first, then the oldest, then by
// name.
type byAge []*corev1.Pod

func (o byAge) Len() int      { return len(o) }
func (o byAge) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o byAge) Less(i, j int) bool {
	bi, bj := o[i].Spec.NodeName != "", o[j].Spec.NodeName != ""
	if bi != bj {
		return bi
	}
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

func sortByAge(pods []*corev1.Pod) { sort.Sort(byAge(pods)) }
