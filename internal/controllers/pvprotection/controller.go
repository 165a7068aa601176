package pvprotection

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/volumeutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// ControllerName names the controller (queue, metrics, logs).
const ControllerName = "pv-protection"

var pvGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumes")

// Options tune the controller (none yet; the zero value is Kubernetes').
type Options struct{}

type protector struct {
	pvInf *informer.Informer[*corev1.PersistentVolume]
	pvs   *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "pv-protection-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, _ Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("pvprotection: %w", err)
	}
	p := &protector{
		pvInf: manager.InformerFor[*corev1.PersistentVolume](mgr, pvGVR, false),
		pvs:   rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, pvGVR, false),
	}
	ctrl, err := controller.New(ControllerName, p, mgr.ControllerOptions())
	if err != nil {
		return fmt.Errorf("pvprotection: %w", err)
	}
	if err := ctrl.Watch(controller.Kind(p.pvInf, "v1 persistentvolumes", handler.Object[*corev1.PersistentVolume]())); err != nil {
		return fmt.Errorf("pvprotection: %w", err)
	}
	return mgr.Add(ctrl)
}

// Reconcile adds the finalizer to a live volume that lacks it, and removes
// it from a deleted volume that is not Bound.
func (p *protector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv, ok, err := p.pvInf.Indexer().GetByKey(req.Name)
	if err != nil || !ok {
		return reconcile.Result{}, err
	}
	has := slices.Contains(pv.Finalizers, volumeutil.PVProtectionFinalizer)
	npv := pv.DeepCopy()
	switch {
	case pv.DeletionTimestamp == nil && !has:
		npv.Finalizers = append(npv.Finalizers, volumeutil.PVProtectionFinalizer)
	case pv.DeletionTimestamp != nil && has && pv.Status.Phase != corev1.VolumeBound:
		npv.Finalizers = slices.DeleteFunc(npv.Finalizers, func(f string) bool { return f == volumeutil.PVProtectionFinalizer })
	default:
		return reconcile.Result{}, nil
	}
	if _, err := p.pvs.Update(ctx, npv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update finalizers of volume %s: %w", pv.Name, err)
	}
	return reconcile.Result{}, nil
}
