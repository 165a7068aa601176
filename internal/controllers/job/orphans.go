package job

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// orphanCandidates maps a pod event to a cleanup request when the pod
// carries the tracking finalizer but no unfinished Job controls it.
func (r *reconciler) orphanCandidates(pod *corev1.Pod) []reconcile.Request {
	if !hasTrackingFinalizer(pod) || !r.orphaned(pod) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}}}
}

// orphaned reports whether pod's tracking finalizer is nobody's to
// remove: it has no controller, or its Job is gone or finished. A pod
// controlled by something other than a Job is left alone, as is one whose
// Job another controller manages.
func (r *reconciler) orphaned(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return true
	}
	if !isJobRef(ref) {
		return false
	}
	job := r.resolve(pod.Namespace, ref)
	if job == nil {
		return true
	}
	return managedByUs(job) && isFinished(job)
}

// orphanReconciler removes the tracking finalizer of orphaned pods.
type orphanReconciler struct{ r *reconciler }

// Reconcile implements reconcile.Reconciler.
func (o *orphanReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod, err := o.r.podInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get pod %s from cache: %w", req, err)
	}
	if !hasTrackingFinalizer(pod) || !o.r.orphaned(pod) {
		return reconcile.Result{}, nil
	}
	if err := o.r.removeFinalizer(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}
