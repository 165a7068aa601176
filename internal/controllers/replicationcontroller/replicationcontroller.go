package replicationcontroller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Kubernetes' names.
const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "replicationcontroller"
	// EventSource is the component of the controller's Events.
	EventSource = "replication-controller"
	// ServiceAccount is the controller's identity in kube-system.
	ServiceAccount = "replication-controller"
)

var (
	rcGVR = corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	rcGVK = corev1.SchemeGroupVersion.WithKind("ReplicationController")
)

// Kind is the ReplicationController as package replicaset drives it.
var Kind = replicaset.Kind{Name: ControllerName, EventSource: EventSource, ServiceAccount: ServiceAccount, New: newOwner}

// Add registers the ReplicationController controller on mgr (same
// options as the ReplicaSet controller's).
func Add(mgr *manager.Manager, opts replicaset.Options) error {
	return replicaset.AddKind(mgr, opts, Kind)
}

// owner shows ReplicationControllers to the ReplicaSet controller.
type owner struct {
	inf *informer.Informer[*corev1.ReplicationController]
	api *rest.Resource[*corev1.ReplicationController, *corev1.ReplicationControllerList]
}

func newOwner(mgr *manager.Manager, c *rest.Client) (replicaset.Owner, error) {
	return &owner{
		inf: manager.InformerFor[*corev1.ReplicationController](mgr, rcGVR, true),
		api: rest.For[*corev1.ReplicationController, *corev1.ReplicationControllerList](c, rcGVR, true),
	}, nil
}

func (o *owner) GVK() schema.GroupVersionKind { return rcGVK }

func (o *owner) Get(ns, name string) (*appsv1.ReplicaSet, error) {
	rc, err := o.inf.Lister().Namespace(ns).Get(name)
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (o *owner) List(ns string) ([]*appsv1.ReplicaSet, error) {
	rcs, err := o.inf.Lister().Namespace(ns).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, len(rcs))
	for i, rc := range rcs {
		out[i] = toReplicaSet(rc)
	}
	return out, nil
}

func (o *owner) GetLive(ctx context.Context, ns, name string) (metav1.Object, error) {
	return o.api.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

func (o *owner) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	rc, err := o.inf.Lister().Namespace(rs.Namespace).Get(rs.Name)
	if err != nil {
		return fmt.Errorf("update status of replicationcontroller %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	cp := rc.DeepCopy()
	cp.Status = toRCStatus(st)
	if _, err := o.api.Namespace(rs.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of replicationcontroller %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return nil
}

func (o *owner) EventObject(rs *appsv1.ReplicaSet) runtime.Object {
	return &corev1.ReplicationController{ObjectMeta: rs.ObjectMeta}
}

func (o *owner) Source() controller.Source {
	return controller.Kind(o.inf, "v1 replicationcontrollers", handler.Object[*corev1.ReplicationController]())
}

func (o *owner) CachedRequests() func() []reconcile.Request { return sharding.CachedRequests(o.inf) }

func (o *owner) HasSynced() bool { return o.inf.HasSynced() }

// toReplicaSet is rc seen as a ReplicaSet. It shares rc's maps and
// slices: the controller never modifies what it reads.
func toReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
			ObservedGeneration: rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// toRCStatus is the ReplicationController form of a ReplicaSet status.
func toRCStatus(st appsv1.ReplicaSetStatus) corev1.ReplicationControllerStatus {
	out := corev1.ReplicationControllerStatus{
		Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
		ObservedGeneration: st.ObservedGeneration,
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return out
}
