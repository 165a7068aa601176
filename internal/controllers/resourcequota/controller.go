package resourcequota

import (
	"fmt"
	"log/slog"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' defaults.
const (
	// DefaultWorkers is kube-controller-manager's --concurrent-resource-quota-syncs.
	DefaultWorkers = 5
	// DefaultResyncPeriod is its --resource-quota-sync-period.
	DefaultResyncPeriod = 5 * time.Minute
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "resourcequota"
)

var quotasGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	Workers int
	// ResyncPeriod is how often every quota is recounted.
	ResyncPeriod time.Duration
	// Clock tells when a pod's deletion grace period is over; default the
	// real clock.
	Clock clock.PassiveClock
}

// kindEval is a served kind a quota may count.
type kindEval struct {
	gvr schema.GroupVersionResource
	res *registry.Resource
	ev  registry.QuotaEvaluator
}

type reconciler struct {
	log    *slog.Logger
	client *rest.Client
	quotas *rest.Resource[*corev1.ResourceQuota, *corev1.ResourceQuotaList]
	// quotaInf caches the quotas Reconcile reads.
	quotaInf *informer.Informer[*corev1.ResourceQuota]
	kinds    []kindEval
	clock    clock.PassiveClock
	resync   time.Duration
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "resourcequota-controller"

// Add registers the ResourceQuota controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("resourcequota: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	quotaInf := manager.InformerFor[*corev1.ResourceQuota](mgr, quotasGVR, true)
	r := &reconciler{
		quotaInf: quotaInf,
		log:      mgr.Logger().With("controller", ControllerName),
		client:   c,
		quotas:   rest.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c, quotasGVR, true),
		kinds:    quotableKinds(),
		clock:    opts.Clock,
		resync:   opts.ResyncPeriod,
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	b := builder.ControllerManagedBy(mgr).Named(ControllerName).
		For(builder.KindAt[*corev1.ResourceQuota](quotasGVR, true), quotaChanged()).
		WithOptions(copts)
	b = b.Watches(builder.KindAt[*corev1.Pod](corev1.SchemeGroupVersion.WithResource("pods"), true).Map(inNamespace[*corev1.Pod](quotaInf)), podUsageChanged())
	b = b.Watches(builder.KindAt[*corev1.Service](corev1.SchemeGroupVersion.WithResource("services"), true).Map(inNamespace[*corev1.Service](quotaInf)), specChanged())
	b = b.Watches(builder.KindAt[*corev1.PersistentVolumeClaim](corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Map(inNamespace[*corev1.PersistentVolumeClaim](quotaInf)), specChanged())
	b = b.Watches(builder.KindAt[*corev1.ReplicationController](corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), true).Map(inNamespace[*corev1.ReplicationController](quotaInf)), deleteOnly())
	b = b.Watches(builder.KindAt[*corev1.ConfigMap](corev1.SchemeGroupVersion.WithResource("configmaps"), true).Map(inNamespace[*corev1.ConfigMap](quotaInf)), deleteOnly())
	b = b.Watches(builder.KindAt[*corev1.Secret](corev1.SchemeGroupVersion.WithResource("secrets"), true).Map(inNamespace[*corev1.Secret](quotaInf)), deleteOnly())
	ctrl, err := b.Build(r)
	if err != nil {
		return fmt.Errorf("resourcequota controller: %w", err)
	}
	if err := r.watchDeletions(mgr, ctrl); err != nil {
		return err
	}
	return mgr.Add(ctrl)
}

// quotableKinds are the built-in namespaced kinds stored as themselves
// (not views, not virtual), one version per resource, events excepted.
func quotableKinds() []kindEval {
	seen := map[schema.GroupResource]bool{{Resource: "events"}: true, {Group: "events.k8s.io", Resource: "events"}: true}
	var out []kindEval
	for _, res := range builtin.Resources() {
		gr := schema.GroupResource{Group: res.Group, Resource: res.Resource}
		if !res.Namespaced || res.Virtual != nil || res.View != nil || seen[gr] {
			continue
		}
		seen[gr] = true
		out = append(out, kindEval{gvr: gr.WithVersion(res.Version), res: res, ev: quota.Evaluator(res)})
	}
	return out
}

// inNamespace maps an object to every quota of its namespace.
func inNamespace[T metav1.Object](quotas *informer.Informer[*corev1.ResourceQuota]) func(T) []reconcile.Request {
	return func(obj T) []reconcile.Request {
		qs, err := quotas.Indexer().ByIndex(cache.NamespaceIndex, obj.GetNamespace())
		if err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(qs))
		for _, q := range qs {
			out = append(out, reconcile.Request{NamespacedName: namespacedName(q.Namespace, q.Name)})
		}
		return out
	}
}

// quotaChanged lets through new and deleted quotas, and updates that
// change the spec or leave the status short of it (not the charges of
// admission, which the objects' own events recount).
func quotaChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e predicate.UpdateEvent) bool {
		o, n := e.ObjectOld.(*corev1.ResourceQuota), e.ObjectNew.(*corev1.ResourceQuota)
		if o == n { // resync
			return true
		}
		return !reflect.DeepEqual(o.Spec, n.Spec) || needsSync(n)
	}}
}

// needsSync: status.hard is not spec.hard, or used lacks a hard name.
func needsSync(q *corev1.ResourceQuota) bool {
	if !quota.Equal(q.Spec.Hard, q.Status.Hard) {
		return true
	}
	for k := range q.Spec.Hard {
		if _, ok := q.Status.Used[k]; !ok {
			return true
		}
	}
	return false
}

// noCreate ignores the objects' creations, as Kubernetes' quota monitor
// (it has no add handler): the ResourceQuota admission charged them
// already, and a recount then could undo the charge of a create still in
// flight — charged, not yet stored, so not in the recount's list — and
// let one more object past the limit.
func noCreate(predicate.CreateEvent) bool { return false }

// podUsageChanged lets through pod updates that may lower usage: the pod
// finished (Succeeded or Failed), its deletion started, its spec changed
// (a resize); and deletes.
func podUsageChanged() predicate.Predicate {
	return predicate.Funcs{CreateFunc: noCreate, UpdateFunc: func(e predicate.UpdateEvent) bool {
		o, n := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
		return (!finished(o) && finished(n)) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
			o.Generation != n.Generation
	}}
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// specChanged lets through updates whose generation changed, and deletes.
func specChanged() predicate.Predicate {
	return predicate.Funcs{CreateFunc: noCreate, UpdateFunc: func(e predicate.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || e.ObjectOld.GetGeneration() == 0
	}}
}

// deleteOnly lets through deletes only.
func deleteOnly() predicate.Predicate {
	return predicate.Funcs{CreateFunc: noCreate, UpdateFunc: func(predicate.UpdateEvent) bool { return false }}
}
