package scheduler

import (
	"fmt"
	"slices"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The reasons and annotations of VolumeBinding, kube-scheduler's and the
// PV controller's.
const (
	reasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	reasonVolumeNode       = "node(s) didn't match PersistentVolume's node affinity"
	reasonVolumeBind       = "node(s) didn't find available persistent volumes to bind"
	reasonVolumeMissing    = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

	annSelectedNode    = "volume.kubernetes.io/selected-node"
	annBindCompleted   = "pv.kubernetes.io/bind-completed"
	annBoundByCtrl     = "pv.kubernetes.io/bound-by-controller"
	noProvisioner      = "kubernetes.io/no-provisioner"
	betaClassAnnotaton = "volume.beta.kubernetes.io/storage-class"
)

// volumeState is VolumeBinding's per-pod precomputation: the pod's bound
// claims (their volumes must be reachable from the node) and its unbound
// WaitForFirstConsumer claims (a node must offer a matching Available
// volume or let the class provision one).
type volumeState struct {
	bound   []*corev1.PersistentVolumeClaim
	delayed []*corev1.PersistentVolumeClaim
	pvs     map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	// byClass lists the volumes of each class the delayed claims name.
	byClass map[string][]*corev1.PersistentVolume
	// taken are volumes assumed for other pods' claims.
	taken map[string]bool
}

// claimNames returns the claims the pod's volumes name (generic
// ephemeral volumes as <pod>-<volume>).
func claimNames(pod *corev1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

// ephemeralClaim reports whether name is the claim of one of the pod's
// generic ephemeral volumes.
func ephemeralClaim(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; v.Ephemeral != nil && pod.Name+"-"+v.Name == name {
			return true
		}
	}
	return false
}

func claimClass(c *corev1.PersistentVolumeClaim) string {
	if v, ok := c.Annotations[betaClassAnnotaton]; ok {
		return v
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// fullyBound is the PV controller's "bound": a volume name and the
// bind-completed annotation.
func fullyBound(c *corev1.PersistentVolumeClaim) bool {
	_, done := c.Annotations[annBindCompleted]
	return c.Spec.VolumeName != "" && done
}

// newVolumeState reads the pod's claims: nil without claims; a message
// when the pod cannot be scheduled at all (a claim missing, lost, being
// deleted, or unbound with an Immediate class).
func (s *Scheduler) newVolumeState(pod *corev1.Pod) (*volumeState, string) {
	names := claimNames(pod)
	if len(names) == 0 || s.pvcs == nil {
		return nil, ""
	}
	vs := &volumeState{pvs: map[string]*corev1.PersistentVolume{}, classes: map[string]*storagev1.StorageClass{},
		byClass: map[string][]*corev1.PersistentVolume{}, taken: s.assumedPVs}
	immediate := false
	for _, name := range names {
		c, err := s.pvcs.Lister().Namespace(pod.Namespace).Get(name)
		if err != nil && ephemeralClaim(pod, name) {
			return nil, fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
		}
		if err != nil {
			return nil, fmt.Sprintf("persistentvolumeclaim %q not found", name)
		}
		switch {
		case c.Status.Phase == corev1.ClaimLost:
			return nil, fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", c.Name, c.Spec.VolumeName)
		case c.DeletionTimestamp != nil:
			return nil, fmt.Sprintf("persistentvolumeclaim %q is being deleted", c.Name)
		case fullyBound(c):
			vs.bound = append(vs.bound, c)
			if pv, err := s.pvs.Lister().Get(c.Spec.VolumeName); err == nil {
				vs.pvs[pv.Name] = pv
			}
		case c.Spec.VolumeName == "" && s.delayBinding(c, vs):
			vs.delayed = append(vs.delayed, c)
		default:
			immediate = true
		}
	}
	if immediate {
		return nil, reasonUnboundImmediate
	}
	for class := range vs.classes {
		pvs, _ := s.pvs.Lister().List(nil)
		for _, pv := range pvs {
			if pv.Spec.StorageClassName == class {
				vs.byClass[class] = append(vs.byClass[class], pv)
			}
		}
	}
	return vs, ""
}

// delayBinding reports whether the claim's class binds WaitForFirstConsumer
// (a missing class binds immediately), recording the class.
func (s *Scheduler) delayBinding(c *corev1.PersistentVolumeClaim, vs *volumeState) bool {
	name := claimClass(c)
	if name == "" {
		return false
	}
	class, err := s.classes.Lister().Get(name)
	if err != nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return false
	}
	vs.classes[name] = class
	return true
}

// filter is VolumeBinding's Filter: the node's reasons, nil when the
// pod's volumes can be had there.
func (vs *volumeState) filter(node *corev1.Node) []string {
	var out []string
	nodeOK, missing := true, false
	for _, c := range vs.bound {
		pv := vs.pvs[c.Spec.VolumeName]
		if pv == nil {
			missing = true
			continue
		}
		if !volumeReachable(pv, node) {
			nodeOK = false
		}
	}
	if !nodeOK {
		out = append(out, reasonVolumeNode)
	}
	if len(vs.delayed) > 0 {
		if _, ok := vs.plan(node); !ok {
			out = append(out, reasonVolumeBind)
		}
	}
	if missing {
		out = append(out, reasonVolumeMissing)
	}
	return out
}

// plan chooses, for each delayed claim, the smallest matching Available
// volume reachable from node (nil: the class provisions one); ok is
// false when a claim can have neither.
func (vs *volumeState) plan(node *corev1.Node) (map[*corev1.PersistentVolumeClaim]*corev1.PersistentVolume, bool) {
	chosen := map[string]bool{}
	out := map[*corev1.PersistentVolumeClaim]*corev1.PersistentVolume{}
	for _, c := range vs.delayed {
		class := claimClass(c)
		var best *corev1.PersistentVolume
		for _, pv := range vs.byClass[class] {
			if chosen[pv.Name] || vs.taken[pv.Name] || !volumeMatches(pv, c) || !volumeReachable(pv, node) {
				continue
			}
			if best == nil || pv.Spec.Capacity.Storage().Cmp(*best.Spec.Capacity.Storage()) < 0 {
				best = pv
			}
		}
		if best != nil {
			chosen[best.Name] = true
			out[c] = best
			continue
		}
		if !provisionable(vs.classes[class], node) {
			return nil, false
		}
		out[c] = nil
	}
	return out, true
}

// volumeMatches: an Available volume, free, of at least the claim's
// size, with the claim's access modes and volume mode, selected by the
// claim's selector.
func volumeMatches(pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) bool {
	if pv.DeletionTimestamp != nil || pv.Spec.ClaimRef != nil || pv.Status.Phase != corev1.VolumeAvailable {
		return false
	}
	want := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if pv.Spec.Capacity.Storage().Cmp(want) < 0 {
		return false
	}
	for _, m := range c.Spec.AccessModes {
		if !containsMode(pv.Spec.AccessModes, m) {
			return false
		}
	}
	if modeOf(pv.Spec.VolumeMode) != modeOf(c.Spec.VolumeMode) {
		return false
	}
	if c.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(c.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return false
		}
	}
	return true
}

func modeOf(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

func containsMode(modes []corev1.PersistentVolumeAccessMode, m corev1.PersistentVolumeAccessMode) bool {
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}

// volumeReachable applies the volume's required node affinity.
func volumeReachable(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return true
	}
	for i := range na.Required.NodeSelectorTerms {
		if nodematch.MatchesTerm(&na.Required.NodeSelectorTerms[i], node) {
			return true
		}
	}
	return false
}

// provisionable: the class has a provisioner and its allowedTopologies
// (if any) admit the node.
func provisionable(class *storagev1.StorageClass, node *corev1.Node) bool {
	if class == nil || class.Provisioner == noProvisioner {
		return false
	}
	if len(class.AllowedTopologies) == 0 {
		return true
	}
	for _, term := range class.AllowedTopologies {
		ok := true
		for _, e := range term.MatchLabelExpressions {
			if v, has := node.Labels[e.Key]; !has || !slices.Contains(e.Values, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
