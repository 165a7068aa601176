package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The PVC retention policy is carried by ownerReferences, as Kubernetes
// does it: a claim the set's deletion must remove has the set as its
// controller (WhenDeleted=Delete); a claim of a scaled-down pod that must
// go has that pod as its controller (WhenScaled=Delete); the garbage
// collector does the deleting.

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

// retentionPolicy is spec.persistentVolumeClaimRetentionPolicy, Retain
// for both when unset.
func retentionPolicy(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: retain, WhenScaled: retain}
	if set.Spec.PersistentVolumeClaimRetentionPolicy != nil {
		p = *set.Spec.PersistentVolumeClaimRetentionPolicy
	}
	return p
}

// refersTo reports whether ref names obj of kind gvk (by name, any UID).
func refersTo(ref *metav1.OwnerReference, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	return ref.APIVersion == gvk.GroupVersion().String() && ref.Kind == gvk.Kind && ref.Name == obj.GetName()
}

// hasUnexpectedController reports whether claim is controlled by something
// other than set or pod (or by an older set or pod of the same name),
// unless the policy is Retain/Retain, where owners do not matter.
func hasUnexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	p := retentionPolicy(set)
	if p.WhenScaled == retain && p.WhenDeleted == retain {
		return false
	}
	for i := range claim.OwnerReferences {
		ref := &claim.OwnerReferences[i]
		switch {
		case refersTo(ref, set, setGVK):
			if ref.UID != set.UID {
				return true
			}
		case refersTo(ref, pod, podGVK):
			if ref.UID != pod.UID {
				return true
			}
		case ref.Controller != nil && *ref.Controller:
			return true
		}
	}
	return false
}

// hasNonControllerOwner reports whether set or pod owns claim without
// being its controller.
func hasNonControllerOwner(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	for _, ref := range claim.OwnerReferences {
		if (ref.UID == set.UID || ref.UID == pod.UID) && (ref.Controller == nil || !*ref.Controller) {
			return true
		}
	}
	return false
}

func hasOwner(obj, owner metav1.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// hasStaleOwner reports whether target has a reference to an object named
// like obj (of kind gvk) but with another UID.
func hasStaleOwner(target metav1.Object, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	for _, ref := range target.GetOwnerReferences() {
		if refersTo(&ref, obj, gvk) {
			return ref.UID != obj.GetUID()
		}
	}
	return false
}

// claimOwnersUpToDate reports whether claim's ownerReferences already say
// what the set's retention policy wants for pod.
func claimOwnersUpToDate(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if hasStaleOwner(claim, set, setGVK) || hasStaleOwner(claim, pod, podGVK) {
		return true // the garbage collector will settle it
	}
	if hasUnexpectedController(claim, set, pod) {
		return !hasOwner(claim, set) && !hasOwner(claim, pod)
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	p := retentionPolicy(set)
	scaledDown := !inRange(pod, set)
	switch {
	case p.WhenScaled == retain && p.WhenDeleted == del:
		return hasOwner(claim, set) && !hasOwner(claim, pod)
	case p.WhenScaled == del && p.WhenDeleted == retain:
		return !hasOwner(claim, set) && scaledDown == hasOwner(claim, pod)
	case p.WhenScaled == del && p.WhenDeleted == del:
		return scaledDown != hasOwner(claim, set) && scaledDown == hasOwner(claim, pod)
	default: // Retain/Retain, and unknown values treated so
		return !hasOwner(claim, set) && !hasOwner(claim, pod)
	}
}

// setClaimOwners rewrites claim's references to set and pod as the policy
// wants them.
func setClaimOwners(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) {
	unexpected := hasUnexpectedController(claim, set, pod)
	refs := []metav1.OwnerReference{}
	for _, ref := range claim.OwnerReferences {
		if !refersTo(&ref, set, setGVK) && !refersTo(&ref, pod, podGVK) {
			refs = append(refs, ref)
		}
	}
	if !unexpected {
		p := retentionPolicy(set)
		scaledDown := !inRange(pod, set)
		switch {
		case p.WhenScaled == retain && p.WhenDeleted == del:
			refs = addControllerRef(refs, set, setGVK)
		case p.WhenScaled == del && p.WhenDeleted == retain:
			if scaledDown {
				refs = addControllerRef(refs, pod, podGVK)
			}
		case p.WhenScaled == del && p.WhenDeleted == del:
			if scaledDown {
				refs = addControllerRef(refs, pod, podGVK)
			} else {
				refs = addControllerRef(refs, set, setGVK)
			}
		}
	}
	claim.OwnerReferences = refs
}

func addControllerRef(refs []metav1.OwnerReference, owner metav1.Object, gvk schema.GroupVersionKind) []metav1.OwnerReference {
	for _, ref := range refs {
		if ref.UID == owner.GetUID() {
			return refs
		}
	}
	return append(refs, *metav1.NewControllerRef(owner, gvk))
}
