package autoservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/controllerutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Event reasons, recorded on the Deployment.
const (
	ReasonCreated  = "ServiceCreated"
	ReasonUpdated  = "ServiceUpdated"
	ReasonDeleted  = "ServiceDeleted"
	ReasonNotOwned = "ServiceNotOwned"   // Warning: the name is taken by a Service that is not ours
	ReasonInvalid  = "InvalidDeployment" // Warning: see ErrInvalidDeployment
)

// NotOwnedError says the Service a Deployment asks for exists and belongs
// to something else: another controller, or nobody while it lacks the
// managed-by label (a Service written by hand). It is left alone, and the
// reconcile is retried with backoff.
type NotOwnedError struct {
	// Service is namespace/name of the Service; Controller describes its
	// controller ("" when it has none).
	Service, Controller string
}

func (e *NotOwnedError) Error() string {
	if e.Controller == "" {
		return fmt.Sprintf("service %s exists without a controller and without %s=%s: not adopting it", e.Service, ManagedByLabel, ManagedBy)
	}
	return fmt.Sprintf("service %s is controlled by %s", e.Service, e.Controller)
}

// errTerminating stops CreateOrUpdate on a Service being deleted: its
// deletion event will bring the Deployment back, and the Service is then
// created anew.
var errTerminating = errors.New("service is being deleted")

// Reconcile makes the Service of the Deployment req names match it:
//
//   - Deployment gone or being deleted: nothing (the garbage collector
//     removes the Service through its owner reference);
//   - annotation "true": create or update the Service (DesiredService plus
//     a controller reference), adopting an orphan that carries our label;
//   - otherwise: delete the Service if this Deployment controls it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d := &appsv1.Deployment{}
	err := r.client.Get(ctx, req.NamespacedName, d)
	if apierrors.IsNotFound(err) || (err == nil && d.DeletionTimestamp != nil) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("read deployment %s: %w", req, err)
	}
	log := r.log.With("namespace", d.Namespace, "deployment", d.Name, "service", ServiceName(d.Name))
	if !Wants(d) {
		return reconcile.Result{}, r.deleteService(ctx, log, d)
	}
	want, err := DesiredService(d)
	if err != nil {
		r.recorder.Event(d, corev1.EventTypeWarning, ReasonInvalid, err.Error())
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	return reconcile.Result{}, r.applyService(ctx, log, d, want)
}

// applyService creates or updates the Service to want, owned by d.
func (r *Reconciler) applyService(ctx context.Context, log *slog.Logger, d *appsv1.Deployment, want *corev1.Service) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	op, err := controllerutil.CreateOrUpdateObject(ctx, r.client, svc, func() error {
		if svc.DeletionTimestamp != nil {
			return errTerminating
		}
		if svc.UID != "" && !metav1.IsControlledBy(svc, d) {
			if err := adoptable(svc); err != nil {
				return err
			}
		}
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		for k, v := range want.Labels {
			svc.Labels[k] = v
		}
		svc.Spec.Type = want.Spec.Type
		svc.Spec.Selector = want.Spec.Selector
		svc.Spec.Ports = want.Spec.Ports
		return controllerutil.SetControllerReference(d, svc, r.scheme)
	})
	var notOwned *NotOwnedError
	switch {
	case errors.Is(err, errTerminating):
		log.Info("service is being deleted; waiting for it to go")
		return nil
	case errors.As(err, &notOwned):
		r.recorder.Event(d, corev1.EventTypeWarning, ReasonNotOwned, notOwned.Error())
		return err
	case err != nil:
		return fmt.Errorf("apply service %s/%s: %w", want.Namespace, want.Name, err)
	}
	switch op {
	case controllerutil.OperationResultCreated:
		log.Info("created service", "clusterIP", svc.Spec.ClusterIP)
		r.recorder.Eventf(d, corev1.EventTypeNormal, ReasonCreated, "Created Service %s", svc.Name)
	case controllerutil.OperationResultUpdated:
		log.Info("updated service to match the deployment")
		r.recorder.Eventf(d, corev1.EventTypeNormal, ReasonUpdated, "Updated Service %s to match the Deployment", svc.Name)
	}
	return nil
}

// adoptable returns nil for a Service without a controller that carries
// our managed-by label (ours, orphaned), and a *NotOwnedError otherwise.
func adoptable(svc *corev1.Service) error {
	key := svc.Namespace + "/" + svc.Name
	if ref := metav1.GetControllerOf(svc); ref != nil {
		return &NotOwnedError{Service: key, Controller: fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)}
	}
	if svc.Labels[ManagedByLabel] != ManagedBy {
		return &NotOwnedError{Service: key}
	}
	return nil
}

// deleteService deletes the Service of d when d controls it, as the
// shared cache shows it; the delete is conditional on the uid seen, so a
// Service recreated meanwhile by someone else is not touched.
func (r *Reconciler) deleteService(ctx context.Context, log *slog.Logger, d *appsv1.Deployment) error {
	name := ServiceName(d.Name)
	svc := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: name}, svc)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read service %s/%s: %w", d.Namespace, name, err)
	}
	if !metav1.IsControlledBy(svc, d) || svc.DeletionTimestamp != nil {
		return nil
	}
	uid := svc.UID
	err = r.client.Delete(ctx, svc, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete service %s/%s: %w", d.Namespace, name, err)
	}
	log.Info("deleted service: the deployment no longer asks for one", "annotation", d.Annotations[Annotation])
	r.recorder.Eventf(d, corev1.EventTypeNormal, ReasonDeleted, "Deleted Service %s: annotation %s is not \"true\"", name, Annotation)
	return nil
}
