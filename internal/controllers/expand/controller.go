package expand

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"
	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "persistentvolume-expander"
	// EventSource is the component of the Events it records.
	EventSource = "volume_expand"
	// fsResizePendingMessage is the kubelet-facing message of the
	// FileSystemResizePending condition, as the external resizer writes it.
	fsResizePendingMessage = "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
)

var (
	pvGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	scGVR  = storagev1.SchemeGroupVersion.WithResource("storageclasses")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

// Options tune the controller.
type Options struct {
	// Provisioner is the provisioner name whose volumes are expanded
	// (default provisioner.DefaultName).
	Provisioner string
	// Clock stamps the conditions; default the manager's clock.
	Clock clock.PassiveClock
}

type expander struct {
	provisioner string
	clock       clock.PassiveClock
	pvInf       *informer.Informer[*corev1.PersistentVolume]
	pvcInf      *informer.Informer[*corev1.PersistentVolumeClaim]
	scInf       *informer.Informer[*storagev1.StorageClass]
	podInf      *informer.Informer[*corev1.Pod]
	pvs         *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs        *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	recorder    record.Recorder
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "expand-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("expand: %w", err)
	}
	if opts.Provisioner == "" {
		opts.Provisioner = provisioner.DefaultName
	}
	copts := mgr.ControllerOptions()
	if opts.Clock == nil && copts.Clock != nil {
		opts.Clock = copts.Clock
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return fmt.Errorf("expand: %w", err)
	}
	e := &expander{
		provisioner: opts.Provisioner, clock: opts.Clock,
		pvInf:    manager.InformerFor[*corev1.PersistentVolume](mgr, pvGVR, false),
		pvcInf:   manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcGVR, true),
		scInf:    manager.InformerFor[*storagev1.StorageClass](mgr, scGVR, false),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pvs:      rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, pvGVR, false),
		pvcs:     rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcGVR, true),
		recorder: rec,
	}
	if err := volumeutil.AddPodClaimIndex(e.podInf.Indexer()); err != nil {
		return fmt.Errorf("expand: %w", err)
	}
	ctrl, err := controller.New(ControllerName, e, copts)
	if err != nil {
		return fmt.Errorf("expand: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(e.pvcInf, "v1 persistentvolumeclaims", handler.Object[*corev1.PersistentVolumeClaim]()),
		controller.Kind(e.pvInf, "v1 persistentvolumes", func(pv *corev1.PersistentVolume) []reconcile.Request {
			if r := pv.Spec.ClaimRef; r != nil {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}}}
			}
			return nil
		}),
		controller.Kind(e.podInf, "v1 pods", func(p *corev1.Pod) []reconcile.Request {
			var reqs []reconcile.Request
			for _, n := range volumeutil.ClaimNames(p) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: n}})
			}
			return reqs
		}),
		controller.Kind(e.scInf, "storage.k8s.io/v1 storageclasses", func(*storagev1.StorageClass) []reconcile.Request { return nil }),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("expand: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// Reconcile takes the claim one step further towards its requested size.
func (e *expander) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.Namespace + "/" + req.Name
	c, ok, err := e.pvcInf.Indexer().GetByKey(key)
	if err != nil || !ok || c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName == "" {
		return reconcile.Result{}, err
	}
	pv, ok, err := e.pvInf.Indexer().GetByKey(c.Spec.VolumeName)
	if err != nil || !ok || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
		return reconcile.Result{}, err
	}
	sc, ok, err := e.scInf.Indexer().GetByKey(volumeutil.ClaimClass(c))
	if err != nil || !ok || sc.Provisioner != e.provisioner {
		return reconcile.Result{}, err
	}
	want := c.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pv.Spec.Capacity[corev1.ResourceStorage]
	if want.Cmp(have) > 0 && !nodePending(c, want) {
		return reconcile.Result{}, e.expandController(ctx, c, pv)
	}
	return reconcile.Result{}, e.expandNode(ctx, c, pv)
}

// nodePending reports whether the controller side already expanded the
// volume to want (the volume in the cache may not show it yet).
func nodePending(c *corev1.PersistentVolumeClaim, want resource.Quantity) bool {
	alloc := c.Status.AllocatedResources[corev1.ResourceStorage]
	return c.Status.AllocatedResourceStatuses[corev1.ResourceStorage] == corev1.PersistentVolumeClaimNodeResizePending && alloc.Cmp(want) >= 0
}

// expandController is steps 1 to 3 of the package documentation.
func (e *expander) expandController(ctx context.Context, c *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	want := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if c.Status.AllocatedResourceStatuses[corev1.ResourceStorage] != corev1.PersistentVolumeClaimControllerResizeInProgress {
		// kube-controller-manager's expander hands a volume no in-tree
		// plugin expands to its external resizer.
		e.recorder.Event(c, corev1.EventTypeNormal, "ExternalExpanding", "waiting for an external controller to expand this PVC")
	}
	c, err := e.setStatus(ctx, c, func(st *corev1.PersistentVolumeClaimStatus) {
		st.Conditions = setCondition(st.Conditions, corev1.PersistentVolumeClaimResizing, "", e.clock.Now())
		setAllocated(st, want, corev1.PersistentVolumeClaimControllerResizeInProgress)
	})
	if err != nil {
		return err
	}
	e.recorder.Event(c, corev1.EventTypeNormal, "Resizing", fmt.Sprintf("External resizer is resizing volume %s", pv.Name))
	npv := pv.DeepCopy()
	npv.Spec.Capacity[corev1.ResourceStorage] = want.DeepCopy()
	if _, err := e.pvs.Update(ctx, npv, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("expand volume %s: %w", pv.Name, err)
	}
	c, err = e.setStatus(ctx, c, func(st *corev1.PersistentVolumeClaimStatus) {
		st.Conditions = removeCondition(st.Conditions, corev1.PersistentVolumeClaimResizing)
		st.Conditions = setCondition(st.Conditions, corev1.PersistentVolumeClaimFileSystemResizePending, fsResizePendingMessage, e.clock.Now())
		setAllocated(st, want, corev1.PersistentVolumeClaimNodeResizePending)
	})
	if err != nil {
		return err
	}
	e.recorder.Event(c, corev1.EventTypeNormal, "FileSystemResizeRequired", "Require file system resize of volume on node")
	return nil
}

// expandNode is step 4: the claim's capacity catches up with its volume's
// when a pod on a node uses it.
func (e *expander) expandNode(ctx context.Context, c *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	have := pv.Spec.Capacity[corev1.ResourceStorage]
	cur := c.Status.Capacity[corev1.ResourceStorage]
	if have.Cmp(cur) <= 0 {
		return nil
	}
	node := e.mountedOn(c)
	if node == "" {
		return nil
	}
	c, err := e.setStatus(ctx, c, func(st *corev1.PersistentVolumeClaimStatus) {
		if st.Capacity == nil {
			st.Capacity = corev1.ResourceList{}
		}
		st.Capacity[corev1.ResourceStorage] = have.DeepCopy()
		st.Conditions = removeCondition(st.Conditions, corev1.PersistentVolumeClaimFileSystemResizePending)
		st.Conditions = removeCondition(st.Conditions, corev1.PersistentVolumeClaimResizing)
		delete(st.AllocatedResourceStatuses, corev1.ResourceStorage)
		if len(st.AllocatedResourceStatuses) == 0 {
			st.AllocatedResourceStatuses = nil
		}
	})
	if err != nil {
		return err
	}
	e.recorder.Event(c, corev1.EventTypeNormal, "FileSystemResizeSuccessful",
		fmt.Sprintf("MountVolume.NodeExpandVolume succeeded for volume %q %s", pv.Name, node))
	return nil
}

// mountedOn returns the node of a pod that uses the claim and has not
// terminated ("" when none).
func (e *expander) mountedOn(c *corev1.PersistentVolumeClaim) string {
	pods, _ := e.podInf.Indexer().ByIndex(volumeutil.PodClaimIndex, c.Namespace+"/"+c.Name)
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !volumeutil.PodTerminated(p) {
			return p.Spec.NodeName
		}
	}
	return ""
}

// setStatus writes the claim's status as edit changes it, when it changes.
func (e *expander) setStatus(ctx context.Context, c *corev1.PersistentVolumeClaim, edit func(*corev1.PersistentVolumeClaimStatus)) (*corev1.PersistentVolumeClaim, error) {
	nc := c.DeepCopy()
	edit(&nc.Status)
	if equality.Semantic.DeepEqual(nc.Status, c.Status) {
		return c, nil
	}
	out, err := e.pvcs.Namespace(c.Namespace).UpdateStatus(ctx, nc, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	return out, nil
}

func setAllocated(st *corev1.PersistentVolumeClaimStatus, want resource.Quantity, state corev1.ClaimResourceStatus) {
	if st.AllocatedResources == nil {
		st.AllocatedResources = corev1.ResourceList{}
	}
	st.AllocatedResources[corev1.ResourceStorage] = want.DeepCopy()
	if st.AllocatedResourceStatuses == nil {
		st.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{}
	}
	st.AllocatedResourceStatuses[corev1.ResourceStorage] = state
}

// setCondition sets a True condition of type t, keeping its transition
// time when it is there already.
func setCondition(conds []corev1.PersistentVolumeClaimCondition, t corev1.PersistentVolumeClaimConditionType, msg string, now time.Time) []corev1.PersistentVolumeClaimCondition {
	for i := range conds {
		if conds[i].Type == t {
			conds[i].Status, conds[i].Message = corev1.ConditionTrue, msg
			return conds
		}
	}
	return append(conds, corev1.PersistentVolumeClaimCondition{Type: t, Status: corev1.ConditionTrue, Message: msg,
		LastTransitionTime: metav1.NewTime(now)})
}

func removeCondition(conds []corev1.PersistentVolumeClaimCondition, t corev1.PersistentVolumeClaimConditionType) []corev1.PersistentVolumeClaimCondition {
	out := slices.DeleteFunc(conds, func(c corev1.PersistentVolumeClaimCondition) bool { return c.Type == t })
	if len(out) == 0 {
		return nil
	}
	return out
}
