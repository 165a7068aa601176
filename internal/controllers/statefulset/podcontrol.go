package statefulset

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Events, worded as kube-controller-manager words them:
//
//	SuccessfulCreate  "Create Pod web-0 in StatefulSet web successful"
//	FailedCreate      "Create Pod web-0 in StatefulSet web failed error: <err>"
//	SuccessfulDelete, FailedDelete, SuccessfulUpdate, FailedUpdate likewise;
//	SuccessfulCreate  "Create Claim www-web-0 Pod web-0 in StatefulSet web success"
//	FailedCreate      "Create Claim www-web-0 for Pod web-0 in StatefulSet web failed error: <err>"

var verbTitle = map[string]string{"create": "Create", "update": "Update", "delete": "Delete"}

func (r *reconciler) podEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, err error) {
	t := verbTitle[verb]
	if err == nil {
		r.recorder.Eventf(set, corev1.EventTypeNormal, "Successful"+t, "%s Pod %s in StatefulSet %s successful", t, pod.Name, set.Name)
		return
	}
	r.recorder.Eventf(set, corev1.EventTypeWarning, "Failed"+t, "%s Pod %s in StatefulSet %s failed error: %s", t, pod.Name, set.Name, err)
}

func (r *reconciler) claimEvent(set *appsv1.StatefulSet, pod *corev1.Pod, claim *corev1.PersistentVolumeClaim, err error) {
	if err == nil {
		r.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulCreate", "Create Claim %s Pod %s in StatefulSet %s success", claim.Name, pod.Name, set.Name)
		return
	}
	r.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "Create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, pod.Name, set.Name, err)
}

func podObjKey(ns, name string) string   { return "pod:" + ns + "/" + name }
func claimObjKey(ns, name string) string { return "pvc:" + ns + "/" + name }

// createPod creates pod's missing PVCs, then pod, then sets its claims'
// owners for the retention policy.
func (r *reconciler) createPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := r.createClaims(ctx, set, pod); err != nil {
		r.podEvent("create", set, pod, err)
		return err
	}
	key := podObjKey(set.Namespace, pod.Name)
	r.exp.expect(keyOf(set), key, podCreate, "")
	var created *corev1.Pod
	release, err := r.acquireWrite(ctx)
	if err == nil {
		created, err = r.pods.Namespace(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		release()
	}
	if err != nil {
		r.exp.forget(key)
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create pod %s: %w", key, err)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		r.podEvent("create", set, pod, err)
		return fmt.Errorf("create pod %s/%s: %w", set.Namespace, pod.Name, err)
	}
	if err := r.updateClaimOwners(ctx, set, created); err != nil {
		r.podEvent("update", set, pod, err)
		return err
	}
	r.podEvent("create", set, pod, nil)
	return nil
}

// deletePod deletes pod (this UID); a pod already gone is not an error.
func (r *reconciler) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	key := podObjKey(pod.Namespace, pod.Name)
	r.exp.expect(keyOf(set), key, podDelete, pod.UID)
	uid := pod.UID
	release, err := r.acquireWrite(ctx)
	if err == nil {
		err = r.pods.Namespace(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		release()
	}
	if err != nil && !apierrors.IsNotFound(err) {
		r.exp.forget(key)
		if apierrors.IsConflict(err) {
			// Another pod of that name now: the next sync sees it.
			return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		r.podEvent("delete", set, pod, err)
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if apierrors.IsNotFound(err) {
		r.exp.forget(key)
	}
	r.podEvent("delete", set, pod, nil)
	return nil
}

// updatePod restores pod's identity, storage and claim owners (pod is
// the caller's copy), retrying conflicts with the cached pod.
func (r *reconciler) updatePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	attempted := false
	var err error
	for range 5 {
		var consistent bool
		consistent, err = r.fixPod(ctx, set, pod)
		if err != nil || consistent {
			break
		}
		attempted = true
		if _, err = r.pods.Namespace(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			break
		}
		if cur, gerr := r.podInf.Lister().Namespace(pod.Namespace).Get(pod.Name); gerr == nil {
			pod = cur.DeepCopy()
		}
	}
	if attempted {
		r.podEvent("update", set, pod, err)
	}
	if err != nil {
		return fmt.Errorf("update pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// fixPod brings pod's identity and volumes in line with set (creating
// missing PVCs) and its claims' owners with the policy; it reports
// whether the pod needed no change.
func (r *reconciler) fixPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	consistent := true
	if !identityMatches(set, pod) {
		updateIdentity(set, pod)
		consistent = false
	}
	if !storageMatches(set, pod) {
		updateStorage(set, pod)
		consistent = false
		if err := r.createClaims(ctx, set, pod); err != nil {
			r.podEvent("update", set, pod, err)
			return false, err
		}
	}
	if !r.claimsMatchPolicy(set, pod) {
		if err := r.updateClaimOwners(ctx, set, pod); err != nil {
			r.podEvent("update", set, pod, err)
			return false, err
		}
	}
	return consistent, nil
}

// createClaims creates the PVCs pod needs that the cache does not have.
// A claim being deleted is an error: the pod must wait for it to go.
func (r *reconciler) createClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	var errs []error
	for _, tmpl := range set.Spec.VolumeClaimTemplates {
		claim := claimsFor(set, pod)[tmpl.Name]
		cached, err := r.pvcInf.Lister().Namespace(claim.Namespace).Get(claim.Name)
		switch {
		case apierrors.IsNotFound(err):
			key := claimObjKey(claim.Namespace, claim.Name)
			r.exp.expect(keyOf(set), key, claimCreate, "")
			release, err := r.acquireWrite(ctx)
			if err == nil {
				_, err = r.pvcs.Namespace(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
				release()
			}
			if err != nil {
				r.exp.forget(key)
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
			}
			if err == nil || !apierrors.IsAlreadyExists(err) {
				r.claimEvent(set, pod, claim, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
			r.claimEvent(set, pod, claim, err)
		case cached.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return errors.Join(errs...)
}

// claimsMatchPolicy reports whether every existing claim of pod has the
// owners the retention policy wants.
func (r *reconciler) claimsMatchPolicy(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	o := ordinalOf(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, &set.Spec.VolumeClaimTemplates[i], o)
		claim, err := r.pvcInf.Lister().Namespace(set.Namespace).Get(name)
		if err != nil {
			continue // missing: picked up by a later sync
		}
		if !claimOwnersUpToDate(claim, set, pod) {
			return false
		}
	}
	return true
}

// updateClaimOwners rewrites the owners of pod's existing claims for the
// retention policy, warning (ConflictingController) about claims another
// controller owns.
func (r *reconciler) updateClaimOwners(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	o := ordinalOf(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, &set.Spec.VolumeClaimTemplates[i], o)
		claim, err := r.pvcInf.Lister().Namespace(set.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("Could not retrieve claim %s not found for %s when checking PVC deletion policy: %w", name, pod.Name, err)
		}
		if hasUnexpectedController(claim, set, pod) {
			r.recorder.Eventf(set, corev1.EventTypeWarning, "ConflictingController",
				"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", name)
		}
		if claimOwnersUpToDate(claim, set, pod) {
			continue
		}
		claim = claim.DeepCopy()
		setClaimOwners(claim, set, pod)
		if _, err := r.pvcs.Namespace(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", name, err)
		}
	}
	return nil
}

// podClaimIsStale reports whether, under WhenScaled=Delete, one of pod's
// claims still belongs to an earlier pod of that name (it waits for the
// garbage collector to delete it before the pod is recreated).
func (r *reconciler) podClaimIsStale(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if retentionPolicy(set).WhenScaled == retain {
		return false
	}
	for _, c := range claimsFor(set, pod) {
		cached, err := r.pvcInf.Lister().Namespace(c.Namespace).Get(c.Name)
		if err == nil && hasStaleOwner(cached, pod, podGVK) {
			return true
		}
	}
	return false
}
