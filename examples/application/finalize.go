package application

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controllerutil"
)

// finalize runs while app is being deleted: it reports phase
// Terminating, deletes the record ConfigMap (a missing one is fine) and
// then removes the finalizer, after which the server deletes app and the
// garbage collector its Deployment and Service. Any failure is returned
// and retried with backoff; the finalizer stays until the record is gone.
func (r *Reconciler) finalize(ctx context.Context, log *slog.Logger, app *Application) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	if err := r.writeStatus(ctx, log, app, Observation{}); err != nil {
		return err
	}
	name := RecordName(app.Namespace, app.Name)
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: RecordNamespace, Name: name}}
	err := r.client.Delete(ctx, record)
	switch {
	case err == nil:
		log.Info("deleted record", "record", RecordNamespace+"/"+name)
		r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonCleanup, "Deleted record ConfigMap %s/%s", RecordNamespace, name)
	case apierrors.IsNotFound(err):
		log.Debug("record already gone", "record", RecordNamespace+"/"+name)
	default:
		return r.failed(app, fmt.Errorf("delete record %s/%s: %w", RecordNamespace, name, err))
	}
	controllerutil.RemoveFinalizer(app, Finalizer)
	if err := r.client.Update(ctx, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer from application %s/%s: %w", app.Namespace, app.Name, err)
	}
	log.Info("released finalizer", "finalizer", Finalizer)
	return nil
}
