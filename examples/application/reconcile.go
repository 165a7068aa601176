package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controllerutil"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Event reasons, recorded on the Application.
const (
	ReasonCreated  = "Created"  // a Deployment, Service or record was created
	ReasonUpdated  = "Updated"  // the Deployment or Service was set back to the spec
	ReasonReady    = "Ready"    // the phase turned Running
	ReasonCleanup  = "Cleanup"  // the record was deleted before the Application goes
	ReasonFailed   = "Failed"   // Warning: a step failed; it is retried with backoff
	ReasonNotOwned = "NotOwned" // Warning: a name is taken by an object the operator does not own
	ReasonInvalid  = "InvalidName"
)

// NotOwnedError says an object the Application needs exists and is not
// ours: controlled by something else, or uncontrolled without the
// managed-by label. It is left alone; the reconcile is retried with
// backoff.
type NotOwnedError struct {
	// Object is "Deployment ns/name" or "Service ns/name"; Controller
	// describes its controller ("" when it has none).
	Object, Controller string
}

func (e *NotOwnedError) Error() string {
	if e.Controller == "" {
		return fmt.Sprintf("%s exists without a controller and without %s=%s: not adopting it", e.Object, ManagedByLabel, ManagedBy)
	}
	return fmt.Sprintf("%s is controlled by %s", e.Object, e.Controller)
}

// metadataChanged lets through updates that change the deletion
// timestamp, the finalizers or the labels of an Application.
func metadataChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e predicate.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil {
			return true
		}
		return (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) || !reflect.DeepEqual(o.GetLabels(), n.GetLabels())
	}}
}

// Reconcile converges the Application req names:
//
//   - gone: nothing (the garbage collector removes what it owned);
//   - being deleted: delete its record, then release the finalizer;
//   - otherwise: add the finalizer, ensure the record, create or update
//     the Deployment and the Service (controller references to the
//     Application), and write the status the Deployment's readiness gives.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	app := &Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, fmt.Errorf("read application %s: %w", req, err)
	}
	log := r.log.With("namespace", app.Namespace, "application", app.Name, "generation", app.Generation)
	if app.DeletionTimestamp != nil {
		return reconcile.Result{}, r.finalize(ctx, log, app)
	}
	if err := CheckNames(app); err != nil {
		r.recorder.Event(app, corev1.EventTypeWarning, ReasonInvalid, err.Error())
		if serr := r.writeStatus(ctx, log, app, Observation{Blocked: err}); serr != nil {
			return reconcile.Result{}, serr
		}
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	if controllerutil.AddFinalizer(app, Finalizer) {
		if err := r.client.Update(ctx, app); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to application %s: %w", req, err)
		}
		log.Debug("added finalizer", "finalizer", Finalizer)
	}
	if err := r.ensureRecord(ctx, log, app); err != nil {
		return reconcile.Result{}, r.failed(app, err)
	}
	deploy, err := r.ensureDeployment(ctx, log, app)
	blocked, err := classify(err)
	if err != nil {
		return reconcile.Result{}, r.failed(app, err)
	}
	if blocked == nil {
		if blocked, err = classify(r.ensureService(ctx, log, app)); err != nil {
			return reconcile.Result{}, r.failed(app, err)
		}
	}
	if err := r.writeStatus(ctx, log, app, Observation{Deployment: deploy, Blocked: blocked}); err != nil {
		return reconcile.Result{}, err
	}
	if blocked != nil {
		r.recorder.Event(app, corev1.EventTypeWarning, ReasonNotOwned, blocked.Error())
		return reconcile.Result{}, blocked
	}
	return reconcile.Result{}, nil
}

// failed records a Warning event for err (except conflicts, which are
// retried at once and are no news) and returns it.
func (r *Reconciler) failed(app *Application, err error) error {
	if !apierrors.IsConflict(err) {
		r.recorder.Event(app, corev1.EventTypeWarning, ReasonFailed, err.Error())
	}
	return err
}

// writeStatus computes the status and writes it through the status
// subresource when it changed; the first time the phase turns Running it
// records a Ready event.
func (r *Reconciler) writeStatus(ctx context.Context, log *slog.Logger, app *Application, obs Observation) error {
	obs.Now = r.clock.Now()
	st := ComputeStatus(app, obs)
	if reflect.DeepEqual(st, app.Status) {
		return nil
	}
	before := app.Status.Phase
	app.Status = st
	if err := r.client.Status().Update(ctx, app); err != nil {
		return fmt.Errorf("write status of application %s/%s: %w", app.Namespace, app.Name, err)
	}
	if st.Phase != before {
		log.Info("phase changed", "from", before, "to", st.Phase, "ready", st.ReadyReplicas)
		if st.Phase == PhaseRunning {
			r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonReady, "%d of %d replicas ready on image %s",
				st.ReadyReplicas, app.Spec.ReplicasOrDefault(), app.Spec.Image)
		}
	}
	return nil
}

// ensureRecord creates the record namespace when missing and creates or
// updates the record ConfigMap of app.
func (r *Reconciler) ensureRecord(ctx context.Context, log *slog.Logger, app *Application) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RecordNamespace,
		Labels: map[string]string{ManagedByLabel: ManagedBy}}}
	if err := r.client.Create(ctx, ns); err == nil {
		log.Info("created the record namespace", "recordNamespace", RecordNamespace)
	} else if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", RecordNamespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: RecordNamespace, Name: RecordName(app.Namespace, app.Name)}}
	op, err := controllerutil.CreateOrUpdateObject(ctx, r.client, cm, func() error {
		MutateRecord(cm, app)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	if op == controllerutil.OperationResultCreated {
		log.Info("created record", "record", cm.Namespace+"/"+cm.Name)
		r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonCreated, "Created record ConfigMap %s/%s", cm.Namespace, cm.Name)
	}
	return nil
}

// errTerminating stops CreateOrUpdate on an owned object being deleted:
// its deletion event brings the Application back, and it is then created
// anew.
var errTerminating = errors.New("being deleted")

// own makes app the controller of obj, adopting it when it has no
// controller and carries our label; it returns *NotOwnedError otherwise.
func (r *Reconciler) own(app *Application, kind string, obj metav1.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		return errTerminating
	}
	if obj.GetUID() != "" && !metav1.IsControlledBy(obj, app) {
		what := kind + " " + obj.GetNamespace() + "/" + obj.GetName()
		if ref := metav1.GetControllerOf(obj); ref != nil {
			return &NotOwnedError{Object: what, Controller: fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)}
		}
		if obj.GetLabels()[ManagedByLabel] != ManagedBy {
			return &NotOwnedError{Object: what}
		}
	}
	return controllerutil.SetControllerReference(app, obj, r.scheme)
}

// ensureDeployment creates or updates the Deployment of app and returns
// it as the server has it: nil while it is being deleted (its deletion
// brings the Application back), or a *NotOwnedError when the name is
// taken.
func (r *Reconciler) ensureDeployment(ctx context.Context, log *slog.Logger, app *Application) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	op, err := controllerutil.CreateOrUpdateObject(ctx, r.client, d, func() error {
		if err := r.own(app, "Deployment", d); err != nil {
			return err
		}
		MutateDeployment(d, app)
		return nil
	})
	if errors.Is(err, errTerminating) {
		log.Info("deployment is being deleted; waiting for it to go")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s: %w", app.Namespace, app.Name, err)
	}
	r.reportWrite(log, app, op, "Deployment", d.Name, "image", app.Spec.Image, "replicas", app.Spec.ReplicasOrDefault())
	return d, nil
}

// ensureService creates or updates the Service of app; errors as
// ensureDeployment's.
func (r *Reconciler) ensureService(ctx context.Context, log *slog.Logger, app *Application) error {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	op, err := controllerutil.CreateOrUpdateObject(ctx, r.client, s, func() error {
		if err := r.own(app, "Service", s); err != nil {
			return err
		}
		MutateService(s, app)
		return nil
	})
	if errors.Is(err, errTerminating) {
		log.Info("service is being deleted; waiting for it to go")
		return nil
	}
	if err != nil {
		return fmt.Errorf("service %s/%s: %w", app.Namespace, app.Name, err)
	}
	r.reportWrite(log, app, op, "Service", s.Name, "clusterIP", s.Spec.ClusterIP, "port", app.Spec.PortOrDefault())
	return nil
}

// classify splits a CreateOrUpdate error into a NotOwnedError (blocked)
// and any other error.
func classify(err error) (blocked, other error) {
	var notOwned *NotOwnedError
	var already *controllerutil.AlreadyOwnedError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &notOwned), errors.As(err, &already):
		return err, nil
	default:
		return nil, err
	}
}

// reportWrite logs and records an event for a create or an update.
func (r *Reconciler) reportWrite(log *slog.Logger, app *Application, op controllerutil.OperationResult, kind, name string, attrs ...any) {
	switch op {
	case controllerutil.OperationResultCreated:
		log.Info("created "+kind, append([]any{"name", name}, attrs...)...)
		r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonCreated, "Created %s %s", kind, name)
	case controllerutil.OperationResultUpdated:
		log.Info("updated "+kind, append([]any{"name", name}, attrs...)...)
		r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonUpdated, "Updated %s %s to match the Application", kind, name)
	}
}
