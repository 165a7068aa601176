package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "serviceaccount"
	// DefaultWorkers is kube-controller-manager's
	// --concurrent-serviceaccount-syncs default.
	DefaultWorkers = 5
	// DefaultName is the account every namespace gets.
	DefaultName = "default"
)

var (
	nsGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	saGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of namespaces synced at once (default 5).
	Workers int
}

type reconciler struct {
	log   *slog.Logger
	nsInf *informer.Informer[*corev1.Namespace]
	saInf *informer.Informer[*corev1.ServiceAccount]
	sas   *rest.Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "service-account-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("serviceaccount: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	r := &reconciler{
		log:   mgr.Logger().With("controller", ControllerName),
		nsInf: manager.InformerFor[*corev1.Namespace](mgr, nsGVR, false),
		saInf: manager.InformerFor[*corev1.ServiceAccount](mgr, saGVR, true),
		sas:   rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c, saGVR, true),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return fmt.Errorf("serviceaccount: %w", err)
	}
	activeOnUpdate := predicate.Funcs{
		CreateFunc: func(predicate.CreateEvent) bool { return true },
		UpdateFunc: func(e predicate.UpdateEvent) bool {
			ns, ok := e.ObjectNew.(*corev1.Namespace)
			return ok && ns.Status.Phase == corev1.NamespaceActive
		},
		DeleteFunc: func(predicate.DeleteEvent) bool { return false },
	}
	onlyDelete := predicate.Funcs{
		CreateFunc: func(predicate.CreateEvent) bool { return false },
		UpdateFunc: func(predicate.UpdateEvent) bool { return false },
		DeleteFunc: func(predicate.DeleteEvent) bool { return true },
	}
	for _, src := range []controller.Source{
		controller.Kind(r.nsInf, "v1 namespaces", handler.Object[*corev1.Namespace](), activeOnUpdate),
		controller.Kind(r.saInf, "v1 serviceaccounts", namespaceOf[*corev1.ServiceAccount], onlyDelete),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("serviceaccount: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// namespaceOf maps an object to the request of its namespace.
func namespaceOf[T metav1.Object](obj T) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
}

// Reconcile implements reconcile.Reconciler for one namespace.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, err := r.nsInf.Lister().Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s from cache: %w", req.Name, err)
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		return reconcile.Result{}, nil
	}
	var errs []error
	for _, name := range []string{DefaultName} {
		if _, err := r.saInf.Lister().Namespace(ns.Name).Get(name); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}}
		_, err := r.sas.Namespace(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			continue
		}
		errs = append(errs, fmt.Errorf("create serviceaccount %s/%s: %w", ns.Name, name, err))
	}
	return reconcile.Result{}, errors.Join(errs...)
}
