package replicaset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Kind is a kind this package's controller keeps replicas for: the
// ReplicaSet, or another kind with the same semantics seen as one (the
// legacy ReplicationController, as Kubernetes runs its ReplicaSet
// controller on converted ReplicationControllers).
type Kind struct {
	// Name names the controller (queue, metrics, logs).
	Name string
	// EventSource is the component of the controller's Events.
	EventSource string
	// ServiceAccount names the controller's identity (kube-controller-
	// manager's ServiceAccount for it, see manager.ClientFor).
	ServiceAccount string
	// New builds the kind's view on mgr's informers, writing with c.
	New func(mgr *manager.Manager, c *rest.Client) (Owner, error)
}

// Owner is the controller's view of its kind's objects, each seen as a
// ReplicaSet carrying the object's metadata (name, namespace, UID,
// generation, deletionTimestamp), selector, replicas, minReadySeconds,
// template and status.
type Owner interface {
	// GVK is the kind of the controller references of created pods.
	GVK() schema.GroupVersionKind
	// Get returns an object from the cache (shared: never modified).
	Get(namespace, name string) (*appsv1.ReplicaSet, error)
	// List returns the cached objects of a namespace (shared).
	List(namespace string) ([]*appsv1.ReplicaSet, error)
	// GetLive reads an object from the API server (for the deletion
	// recheck before adoption).
	GetLive(ctx context.Context, namespace, name string) (metav1.Object, error)
	// UpdateStatus writes st as the object's status.
	UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error
	// EventObject is what the controller's Events about rs refer to.
	EventObject(rs *appsv1.ReplicaSet) runtime.Object
	// Source delivers the kind's events as requests for the objects.
	Source() controller.Source
	// CachedRequests lists a request per cached object (sharding).
	CachedRequests() func() []reconcile.Request
	// HasSynced says whether the kind's informer has synced.
	HasSynced() bool
}

// ReplicaSetKind is the apps/v1 ReplicaSet.
var ReplicaSetKind = Kind{Name: ControllerName, EventSource: EventSource, ServiceAccount: ServiceAccount, New: newReplicaSetOwner}

// replicaSetOwner is the identity view: ReplicaSets as they are.
type replicaSetOwner struct {
	inf *informer.Informer[*appsv1.ReplicaSet]
	api *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

func newReplicaSetOwner(mgr *manager.Manager, c *rest.Client) (Owner, error) {
	return &replicaSetOwner{
		inf: manager.InformerFor[*appsv1.ReplicaSet](mgr, rsGVR, true),
		api: rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c, rsGVR, true),
	}, nil
}

func (o *replicaSetOwner) GVK() schema.GroupVersionKind { return rsGVK }

func (o *replicaSetOwner) Get(ns, name string) (*appsv1.ReplicaSet, error) {
	return o.inf.Lister().Namespace(ns).Get(name)
}

func (o *replicaSetOwner) List(ns string) ([]*appsv1.ReplicaSet, error) {
	return o.inf.Lister().Namespace(ns).List(labels.Everything())
}

func (o *replicaSetOwner) GetLive(ctx context.Context, ns, name string) (metav1.Object, error) {
	return o.api.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

func (o *replicaSetOwner) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	cp := rs.DeepCopy()
	cp.Status = st
	if _, err := o.api.Namespace(rs.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of replicaset %s: %w", keyOf(rs), err)
	}
	return nil
}

func (o *replicaSetOwner) EventObject(rs *appsv1.ReplicaSet) runtime.Object { return rs }

func (o *replicaSetOwner) Source() controller.Source {
	return controller.Kind(o.inf, "apps/v1 replicasets", handler.Object[*appsv1.ReplicaSet]())
}

func (o *replicaSetOwner) CachedRequests() func() []reconcile.Request {
	return sharding.CachedRequests(o.inf)
}

func (o *replicaSetOwner) HasSynced() bool { return o.inf.HasSynced() }
