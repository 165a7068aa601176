package statemachine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controllerutil"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Event reasons, one per transition, recorded on the Database.
const (
	ReasonPending            = "Pending"
	ReasonProvisioning       = "Provisioning"
	ReasonProvisioned        = "Provisioned"
	ReasonProvisioningFailed = "ProvisioningFailed" // Warning
	ReasonUpdating           = "Updating"
	ReasonUpdated            = "Updated"
	ReasonUpdateFailed       = "UpdateFailed" // Warning
	ReasonRetrying           = "Retrying"
	ReasonTerminating        = "Terminating"
	ReasonTornDown           = "TornDown"
	ReasonUnknownPhase       = "UnknownPhase" // Warning
)

// Reconcile takes the Database req names one step through its state
// machine (seed 004 §6.3), dispatching on status.phase:
//
//   - being deleted: Terminating, then after TeardownTime the finalizer
//     goes and the API server removes the object;
//   - "": the finalizer is added and the phase set to Pending;
//   - Pending: Provisioning of the current generation starts;
//   - Provisioning / Updating: after ProvisionTime / UpdateTime, Running,
//     or Failed when spec.failProvisioning is set;
//   - Running: Updating when the spec changed (generation >
//     observedGeneration), else nothing;
//   - Failed: back to Pending after the retry backoff, or at once when the
//     spec changed since the failed attempt.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	db := &dbv1.Database{}
	err := r.reader.Get(ctx, req.NamespacedName, db)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("read database %s: %w", req, err)
	}
	log := r.log.With("namespace", db.Namespace, "database", db.Name, "generation", db.Generation)
	if db.DeletionTimestamp != nil {
		return r.terminate(ctx, log, db)
	}
	if controllerutil.AddFinalizer(db, Finalizer) {
		if err = r.client.Update(ctx, db); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to database %s: %w", req, err)
		}
		log.Info("added finalizer", "finalizer", Finalizer)
	}
	st := &db.Status
	switch st.Phase {
	case "":
		return r.to(ctx, log, db, dbv1.PhasePending, corev1.EventTypeNormal, ReasonPending,
			fmt.Sprintf("accepted %s; waiting to provision", describe(db)), 0)
	case dbv1.PhasePending:
		st.ObservedGeneration = db.Generation
		return r.to(ctx, log, db, dbv1.PhaseProvisioning, corev1.EventTypeNormal, ReasonProvisioning,
			fmt.Sprintf("provisioning %s (takes %s)", describe(db), r.opts.ProvisionTime), r.opts.ProvisionTime)
	case dbv1.PhaseProvisioning:
		return r.finish(ctx, log, db, r.opts.ProvisionTime, ReasonProvisioned, ReasonProvisioningFailed, "provisioning")
	case dbv1.PhaseUpdating:
		return r.finish(ctx, log, db, r.opts.UpdateTime, ReasonUpdated, ReasonUpdateFailed, "update")
	case dbv1.PhaseRunning:
		if db.Generation == st.ObservedGeneration {
			return reconcile.Result{}, nil
		}
		st.ObservedGeneration = db.Generation
		return r.to(ctx, log, db, dbv1.PhaseUpdating, corev1.EventTypeNormal, ReasonUpdating,
			fmt.Sprintf("applying generation %d: %s (takes %s)", db.Generation, describe(db), r.opts.UpdateTime), r.opts.UpdateTime)
	case dbv1.PhaseFailed:
		return r.retry(ctx, log, db)
	default:
		// status.phase has an enum in the CRD; only a CRD without it, or
		// a newer controller's phase, gets here.
		err := fmt.Errorf("database %s has unknown phase %q", req, st.Phase)
		r.recorder.Event(db, corev1.EventTypeWarning, ReasonUnknownPhase, err.Error())
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
}

// finish ends the operation in progress once it has lasted d: Running, or
// Failed (retries + 1) when spec.failProvisioning is set.
func (r *Reconciler) finish(ctx context.Context, log *slog.Logger, db *dbv1.Database, d time.Duration, okReason, failReason, what string) (reconcile.Result, error) {
	if left := r.remaining(db, d); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	st := &db.Status
	if db.Spec.FailProvisioning {
		st.Retries++
		wait := r.opts.retryDelay(st.Retries)
		return r.to(ctx, log, db, dbv1.PhaseFailed, corev1.EventTypeWarning, failReason,
			fmt.Sprintf("%s failed (attempt %d): simulated failure, spec.failProvisioning is true; retrying in %s", what, st.Retries, wait), wait)
	}
	st.Retries = 0
	return r.to(ctx, log, db, dbv1.PhaseRunning, corev1.EventTypeNormal, okReason,
		fmt.Sprintf("%s is running (generation %d)", describe(db), st.ObservedGeneration), 0)
}

// retry moves a Failed Database back to Pending: at once when its spec
// changed since the failed attempt (the count starts again), else once the
// backoff of its retries has passed.
func (r *Reconciler) retry(ctx context.Context, log *slog.Logger, db *dbv1.Database) (reconcile.Result, error) {
	st := &db.Status
	if db.Generation != st.ObservedGeneration {
		st.Retries = 0
		return r.to(ctx, log, db, dbv1.PhasePending, corev1.EventTypeNormal, ReasonRetrying,
			fmt.Sprintf("spec changed (generation %d); retrying now", db.Generation), 0)
	}
	if left := r.remaining(db, r.opts.retryDelay(st.Retries)); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	return r.to(ctx, log, db, dbv1.PhasePending, corev1.EventTypeNormal, ReasonRetrying,
		fmt.Sprintf("retrying after %d failed attempts", st.Retries), 0)
}

// terminate runs the teardown of a Database being deleted: Terminating
// first, then, TeardownTime later, the finalizer is removed.
func (r *Reconciler) terminate(ctx context.Context, log *slog.Logger, db *dbv1.Database) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(db, Finalizer) {
		return reconcile.Result{}, nil
	}
	if db.Status.Phase != dbv1.PhaseTerminating {
		return r.to(ctx, log, db, dbv1.PhaseTerminating, corev1.EventTypeNormal, ReasonTerminating,
			fmt.Sprintf("tearing down %s (takes %s)", describe(db), r.opts.TeardownTime), r.opts.TeardownTime)
	}
	if left := r.remaining(db, r.opts.TeardownTime); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	controllerutil.RemoveFinalizer(db, Finalizer)
	if err := r.client.Update(ctx, db); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("remove finalizer from database %s/%s: %w", db.Namespace, db.Name, err)
	}
	log.Info("teardown complete; finalizer removed", "finalizer", Finalizer)
	r.recorder.Eventf(db, corev1.EventTypeNormal, ReasonTornDown, "%s torn down; finalizer removed", describe(db))
	return reconcile.Result{}, nil
}

// to writes the transition to phase (message, transition time now, the
// Ready condition) through the status subresource, then logs it and
// records the event; the result requeues after wait (0: not at all, the
// write's own watch event brings the Database back).
func (r *Reconciler) to(ctx context.Context, log *slog.Logger, db *dbv1.Database, phase dbv1.Phase, eventType, reason, msg string, wait time.Duration) (reconcile.Result, error) {
	from := db.Status.Phase
	now := r.clock.Now()
	st := &db.Status
	st.Phase, st.Message = phase, msg
	st.PhaseTransitionTime = &metav1.MicroTime{Time: now}
	ready := metav1.Condition{Type: dbv1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(phase),
		Message: msg, ObservedGeneration: db.Generation, LastTransitionTime: metav1.NewTime(now)}
	if phase == dbv1.PhaseRunning {
		ready.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	if err := r.client.Status().Update(ctx, db); err != nil {
		return reconcile.Result{}, fmt.Errorf("move database %s/%s from %q to %s: %w", db.Namespace, db.Name, from, phase, err)
	}
	log.Info("phase changed", "from", string(from), "to", string(phase), "retries", st.Retries, "message", msg)
	r.recorder.Event(db, eventType, reason, msg)
	return reconcile.Result{RequeueAfter: wait}, nil
}

// remaining is how much of d is left since the current phase began; a
// Database without a transition time has none left.
func (r *Reconciler) remaining(db *dbv1.Database, d time.Duration) time.Duration {
	if db.Status.PhaseTransitionTime == nil {
		return 0
	}
	return d - r.clock.Since(db.Status.PhaseTransitionTime.Time)
}

func describe(db *dbv1.Database) string {
	v := db.Spec.Version
	if v == "" {
		v = "(latest)"
	}
	return fmt.Sprintf("%s %s with %d GB", db.Spec.Engine, v, db.Spec.StorageGB)
}
