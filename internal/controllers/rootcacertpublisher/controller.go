package rootcacertpublisher

import (
	"context"
	"errors"
	"fmt"
	"maps"

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

// Kubernetes' names and wording.
const (
	// ConfigMapName is the ConfigMap published in every namespace.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey holds the PEM bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation carries Description.
	DescriptionAnnotation = "kubernetes.io/description"
	// Description is kube-controller-manager's text.
	Description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "root-ca-cert-publisher"
	// DefaultWorkers is kube-controller-manager's count.
	DefaultWorkers = 1
)

var (
	nsGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	cmGVR = corev1.SchemeGroupVersion.WithResource("configmaps")
)

// Options configure the controller.
type Options struct {
	// RootCA is the PEM bundle to publish (required).
	RootCA []byte
	// Workers is the number of namespaces synced at once (default 1).
	Workers int
}

type reconciler struct {
	rootCA string
	nsInf  *informer.Informer[*corev1.Namespace]
	cmInf  *informer.Informer[*corev1.ConfigMap]
	cms    *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "root-ca-cert-publisher"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	if len(opts.RootCA) == 0 {
		return errors.New("rootcacertpublisher: no root CA to publish")
	}
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("rootcacertpublisher: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	r := &reconciler{
		rootCA: string(opts.RootCA),
		nsInf:  manager.InformerFor[*corev1.Namespace](mgr, nsGVR, false),
		cmInf:  manager.InformerFor[*corev1.ConfigMap](mgr, cmGVR, true),
		cms:    rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return fmt.Errorf("rootcacertpublisher: %w", err)
	}
	nsEvents := predicate.Funcs{
		UpdateFunc: func(e predicate.UpdateEvent) bool {
			ns, ok := e.ObjectNew.(*corev1.Namespace)
			return ok && ns.Status.Phase == corev1.NamespaceActive
		},
		DeleteFunc: func(predicate.DeleteEvent) bool { return false },
	}
	cmEvents := predicate.And(
		predicate.NewFilter(func(o metav1.Object) bool { return o.GetName() == ConfigMapName }),
		predicate.Funcs{CreateFunc: func(predicate.CreateEvent) bool { return false }})
	for _, src := range []controller.Source{
		controller.Kind(r.nsInf, "v1 namespaces", handler.Object[*corev1.Namespace](), nsEvents),
		controller.Kind(r.cmInf, "v1 configmaps", namespaceOf, cmEvents),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("rootcacertpublisher: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

func namespaceOf(cm *corev1.ConfigMap) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cm.Namespace}}}
}

// Reconcile implements reconcile.Reconciler for one namespace.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := req.Name
	cm, err := r.cmInf.Lister().Namespace(ns).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		_, err = r.cms.Namespace(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ns,
				Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data: map[string]string{DataKey: r.rootCA},
		}, metav1.CreateOptions{})
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) ||
			apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("create configmap %s/%s: %w", ns, ConfigMapName, err)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get configmap %s/%s from cache: %w", ns, ConfigMapName, err)
	}
	want := map[string]string{DataKey: r.rootCA}
	if maps.Equal(cm.Data, want) && cm.Annotations[DescriptionAnnotation] != "" {
		return reconcile.Result{}, nil
	}
	cp := cm.DeepCopy()
	cp.Data = want
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[DescriptionAnnotation] = Description
	if _, err := r.cms.Namespace(ns).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return reconcile.Result{}, fmt.Errorf("update configmap %s/%s: %w", ns, ConfigMapName, err)
	}
	return reconcile.Result{}, nil
}
