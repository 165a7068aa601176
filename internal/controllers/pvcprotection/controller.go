package pvcprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "pvc-protection"
)

var (
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

// Options tune the controller (none yet; the zero value is Kubernetes').
type Options struct{}

type protector struct {
	log    *slog.Logger
	pvcInf *informer.Informer[*corev1.PersistentVolumeClaim]
	podInf *informer.Informer[*corev1.Pod]
	pvcs   *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "pvc-protection-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, _ Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("pvcprotection: %w", err)
	}
	p := &protector{
		log:    mgr.Logger().With("controller", ControllerName),
		pvcInf: manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcGVR, true),
		podInf: manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pvcs:   rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcGVR, true),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true),
	}
	if err := volumeutil.AddPodClaimIndex(p.podInf.Indexer()); err != nil {
		return fmt.Errorf("pvcprotection: %w", err)
	}
	ctrl, err := controller.New(ControllerName, p, mgr.ControllerOptions())
	if err != nil {
		return fmt.Errorf("pvcprotection: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(p.pvcInf, "v1 persistentvolumeclaims", handler.Object[*corev1.PersistentVolumeClaim]()),
		controller.Kind(p.podInf, "v1 pods", podClaims),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("pvcprotection: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// podClaims maps a pod to the claims it uses: its deletion or end may
// free them.
func podClaims(p *corev1.Pod) []reconcile.Request {
	var reqs []reconcile.Request
	for _, name := range volumeutil.ClaimNames(p) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: name}})
	}
	return reqs
}

// Reconcile adds the finalizer to a live claim that lacks it, and removes
// it from a deleted claim no pod uses.
func (p *protector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c, ok, err := p.pvcInf.Indexer().GetByKey(req.Namespace + "/" + req.Name)
	if err != nil || !ok {
		return reconcile.Result{}, err
	}
	has := slices.Contains(c.Finalizers, volumeutil.PVCProtectionFinalizer)
	switch {
	case c.DeletionTimestamp == nil && !has:
		nc := c.DeepCopy()
		nc.Finalizers = append(nc.Finalizers, volumeutil.PVCProtectionFinalizer)
		return reconcile.Result{}, p.update(ctx, nc)
	case c.DeletionTimestamp == nil || !has:
		return reconcile.Result{}, nil
	}
	used, err := p.inUse(ctx, c)
	if err != nil || used {
		return reconcile.Result{}, err // a pod's deletion or end queues the claim again
	}
	nc := c.DeepCopy()
	nc.Finalizers = slices.DeleteFunc(nc.Finalizers, func(f string) bool { return f == volumeutil.PVCProtectionFinalizer })
	return reconcile.Result{}, p.update(ctx, nc)
}

// inUse reports whether a pod that has not terminated uses the claim: the
// cache first, then (before the finalizer goes) the server, so a pod
// created a moment ago is not missed.
func (p *protector) inUse(ctx context.Context, c *corev1.PersistentVolumeClaim) (bool, error) {
	pods, err := p.podInf.Indexer().ByIndex(volumeutil.PodClaimIndex, c.Namespace+"/"+c.Name)
	if err != nil {
		return false, fmt.Errorf("pods of claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	if slices.ContainsFunc(pods, func(pod *corev1.Pod) bool { return !volumeutil.PodTerminated(pod) }) {
		return true, nil
	}
	live, err := p.pods.Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list pods of namespace %s: %w", c.Namespace, err)
	}
	for i := range live.Items {
		pod := &live.Items[i]
		if !volumeutil.PodTerminated(pod) && slices.Contains(volumeutil.ClaimNames(pod), c.Name) {
			return true, nil
		}
	}
	return false, nil
}

func (p *protector) update(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	_, err := p.pvcs.Namespace(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update finalizers of claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}
