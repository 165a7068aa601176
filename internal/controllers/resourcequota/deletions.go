package resourcequota

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// typedWatches are the resources Add watches with typed informers (their
// updates may change usage too); every other quotable kind is watched by
// deletionWatches.
var typedWatches = map[schema.GroupResource]bool{
	{Resource: "pods"}: true, {Resource: "services"}: true, {Resource: "persistentvolumeclaims"}: true,
	{Resource: "replicationcontrollers"}: true, {Resource: "configmaps"}: true, {Resource: "secrets"}: true,
	{Resource: "resourcequotas"}: true,
}

// metaInformer is an informer of one kind's metadata (PartialObjectMetadata,
// listed and watched in protobuf as kube-controller-manager's quota
// monitor does), reduced to names (nameOnly).
type metaInformer = informer.Informer[*metav1.PartialObjectMetadata]

// nameOnly keeps of an object what the deletion watches need: its
// namespace, name and resourceVersion (the cache keeps no more than that
// of every object of every quotable kind).
func nameOnly(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion,
	}}, nil
}

// deletionWatches returns, for every quotable kind not among typedWatches,
// an informer of its objects' names and a source that enqueues, when
// one is deleted, the quotas of its namespace that count the kind — as
// Kubernetes' quota monitor replenishes quotas on the delete of any kind
// they count (count/replicasets.apps), without waiting for the resync. An
// update of such a kind changes no usage; a create is charged by the
// ResourceQuota admission.
func (r *reconciler) deletionWatches() ([]*metaInformer, []controller.Source) {
	var infs []*metaInformer
	var srcs []controller.Source
	for _, k := range r.kinds {
		if typedWatches[k.gvr.GroupResource()] {
			continue
		}
		res := rest.For[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](r.client, k.gvr, true).MetadataOnly()
		inf := informer.New[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](res, informer.Options[*metav1.PartialObjectMetadata]{
			Transform: nameOnly,
			Resource:  k.gvr.GroupResource(),
			Logger:    r.log,
			Reflector: reflector.Options{Name: ControllerName + " " + k.gvr.GroupResource().String()},
		})
		infs = append(infs, inf)
		srcs = append(srcs, controller.Kind(inf, k.gvr.String(), r.countingQuotas(k), deletesOnly()))
	}
	return infs, srcs
}

// countingQuotas maps a deleted object of kind k to the quotas of its
// namespace with a hard name k's evaluator uses.
func (r *reconciler) countingQuotas(k kindEval) func(*metav1.PartialObjectMetadata) []reconcile.Request {
	return func(obj *metav1.PartialObjectMetadata) []reconcile.Request {
		var out []reconcile.Request
		for _, req := range inNamespace[*metav1.PartialObjectMetadata](r.quotaInf)(obj) {
			q, err := r.quotaInf.Lister().Namespace(req.Namespace).Get(req.Name)
			if err != nil || len(k.ev.MatchingResources(quota.Names(q.Spec.Hard))) == 0 {
				continue
			}
			out = append(out, req)
		}
		return out
	}
}

// deletesOnly lets through deletes only.
func deletesOnly() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(predicate.CreateEvent) bool { return false },
		UpdateFunc: func(predicate.UpdateEvent) bool { return false },
	}
}

// runInformers runs infs until ctx ends (while the controller leads).
func runInformers(infs []*metaInformer) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, inf := range infs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				inf.Run(ctx)
			}()
		}
		wg.Wait()
		return nil
	}
}

// watchDeletions adds the deletion watches to c and registers the
// runnable of their informers on mgr (it runs while the manager leads, as
// the controller does).
func (r *reconciler) watchDeletions(mgr *manager.Manager, c *controller.Controller) error {
	infs, srcs := r.deletionWatches()
	for _, s := range srcs {
		if err := c.Watch(s); err != nil {
			return fmt.Errorf("resourcequota controller: %w", err)
		}
	}
	return mgr.Add(manager.RunnableFunc(runInformers(infs)))
}
