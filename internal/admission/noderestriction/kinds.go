package noderestriction

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// pod: mirror pods of its own on create, its own pods on delete, their
// status on update.
func (p *Plugin) pod(ctx context.Context, env registry.Env, node string, pod *corev1.Pod, a *registry.Attributes) error {
	switch a.Subresource {
	case "":
	case "status":
		return podStatus(node, a)
	default:
		return fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource)
	}
	switch a.Operation {
	case registry.Create:
		return mirrorPod(ctx, env, node, pod)
	case registry.Delete:
		cur, err := getPod(ctx, env, a.Namespace, nameOr(a.Name, pod.Name))
		if err != nil {
			return err
		}
		if cur.Spec.NodeName != node {
			return fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", node)
		}
		return nil
	}
	return fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node)
}

func nameOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mirrorPod(ctx context.Context, env registry.Env, node string, pod *corev1.Pod) error {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; !ok {
		return fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, node)
	}
	if pod.Spec.NodeName != node {
		return fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node)
	}
	switch len(pod.OwnerReferences) {
	case 0:
		return fmt.Errorf("node %q can only create pods with an owner reference set to itself", node)
	case 1:
	default:
		return fmt.Errorf("node %q can only create pods with a single owner reference set to itself", node)
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != node {
		return fmt.Errorf("node %q can only create pods with an owner reference set to itself", node)
	}
	if owner.Controller == nil || !*owner.Controller {
		return fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", node)
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", node)
	}
	objs := env.Objects(nodesGVR)
	if objs == nil {
		return fmt.Errorf("error looking up node %s to verify uid: nodes are not served", node)
	}
	o, err := objs.Get(ctx, "", node)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("error looking up node %s to verify uid: %v", node, err)
	}
	if n, ok := o.(*corev1.Node); !ok || n.UID != owner.UID {
		uid := ""
		if ok {
			uid = string(n.UID)
		}
		return fmt.Errorf("node %s UID mismatch: expected %s got %s", node, owner.UID, uid)
	}
	if what := apiReference(pod); what != "" {
		return fmt.Errorf("node %q can not create pods that reference %s", node, what)
	}
	return nil
}

// apiReference names the first kind of API object a mirror pod refers
// to, "" when none, as kube's check words them.
func apiReference(pod *corev1.Pod) string {
	if pod.Spec.ServiceAccountName != "" {
		return "serviceaccounts"
	}
	if len(pod.Spec.ImagePullSecrets) > 0 {
		return "secrets (via spec.imagePullSecrets)"
	}
	if len(pod.Spec.EphemeralContainers) > 0 {
		return "ephemeral containers"
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return "resourceclaims"
	}
	for _, v := range pod.Spec.Volumes {
		s := v.VolumeSource
		switch {
		case s.Secret != nil:
			return "secrets (via spec.volumes)"
		case s.ConfigMap != nil:
			return "configmaps (via spec.volumes)"
		case s.PersistentVolumeClaim != nil, s.Ephemeral != nil:
			return "persistentvolumeclaims (via spec.volumes)"
		case s.Projected != nil:
			for _, ps := range s.Projected.Sources {
				switch {
				case ps.Secret != nil:
					return "secrets (via spec.volumes)"
				case ps.ConfigMap != nil:
					return "configmaps (via spec.volumes)"
				case ps.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)"
				case ps.ClusterTrustBundle != nil:
					return "clustertrustbundles"
				case ps.PodCertificate != nil:
					return "podcertificates"
				}
			}
		case s.CSI != nil:
			return "csidrivers (via spec.volumes)"
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil {
					return "secrets (via envFrom)"
				}
				if e.ConfigMapRef != nil {
					return "configmaps (via envFrom)"
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					return "secrets (via env)"
				}
				if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
					return "configmaps (via env)"
				}
			}
		}
	}
	return ""
}

// podStatus: the status of the node's own pods, without their labels or
// resource claim statuses.
func podStatus(node string, a *registry.Attributes) error {
	if a.Operation != registry.Update {
		return fmt.Errorf("unexpected operation %q", a.Operation)
	}
	old, ok := a.Old.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("unexpected type %T", a.Old)
	}
	if old.Spec.NodeName != node {
		return fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node)
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("unexpected type %T", a.Object)
	}
	if !apiequality.Semantic.DeepEqual(old.Labels, pod.Labels) {
		return fmt.Errorf("node %q cannot update labels through pod status", node)
	}
	if !apiequality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		return fmt.Errorf("node %q cannot update resource claim statues", node)
	}
	if !apiequality.Semantic.DeepEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus) {
		return fmt.Errorf("node %q cannot update extended resource claim status", node)
	}
	return nil
}

// eviction: only of the node's own pods.
func (p *Plugin) eviction(ctx context.Context, env registry.Env, node string, ev *policyv1.Eviction, a *registry.Attributes) error {
	if a.Operation != registry.Create {
		return fmt.Errorf("unexpected operation %s", a.Operation)
	}
	name := nameOr(a.Name, ev.Name)
	if name == "" {
		return fmt.Errorf("could not determine pod from request data")
	}
	pod, err := getPod(ctx, env, a.Namespace, name)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != node {
		return fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", node)
	}
	return nil
}

// admitNode: its own Node, without restricted labels, taint or owner
// changes.
func admitNode(node string, a *registry.Attributes) error {
	obj, _ := a.Object.(*corev1.Node)
	requested := a.Name
	if requested == "" && obj != nil {
		requested = obj.Name
	}
	if requested != node {
		return fmt.Errorf("node %q is not allowed to modify node %q", node, requested)
	}
	switch a.Operation {
	case registry.Create:
		if obj.Spec.ConfigSource != nil {
			return fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", node)
		}
		if bad := forbiddenLabels(modifiedLabels(obj.Labels, nil)); len(bad) > 0 {
			return fmt.Errorf("node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", "))
		}
	case registry.Update:
		old, ok := a.Old.(*corev1.Node)
		if !ok || obj == nil {
			return fmt.Errorf("unexpected type %T", a.Object)
		}
		if obj.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(obj.Spec.ConfigSource, old.Spec.ConfigSource) {
			return fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", node)
		}
		if !apiequality.Semantic.DeepEqual(obj.Spec.Taints, old.Spec.Taints) {
			return fmt.Errorf("node %q is not allowed to modify taints", node)
		}
		if !apiequality.Semantic.DeepEqual(obj.OwnerReferences, old.OwnerReferences) {
			return fmt.Errorf("node %q is not allowed to modify ownerReferences", node)
		}
		if bad := forbiddenLabels(modifiedLabels(obj.Labels, old.Labels)); len(bad) > 0 {
			return fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", "))
		}
	}
	return nil
}

func modifiedLabels(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			out = append(out, k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; (!ok || v != w) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// kubeletLabels are the kubernetes.io labels a kubelet may set itself.
var kubeletLabels = []string{
	corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelInstanceType, corev1.LabelInstanceTypeStable, corev1.LabelOSStable, corev1.LabelArchStable,
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
}

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

func inNamespace(ns, of string) bool { return ns == of || strings.HasSuffix(ns, "."+of) }

// forbiddenLabels are those of keys a node may not set, sorted.
func forbiddenLabels(keys []string) []string {
	var out []string
	for _, k := range keys {
		ns := labelNamespace(k)
		kubeletOwn := slices.Contains(kubeletLabels, k) ||
			inNamespace(ns, corev1.LabelNamespaceSuffixKubelet) || inNamespace(ns, corev1.LabelNamespaceSuffixNode)
		if inNamespace(ns, corev1.LabelNamespaceNodeRestriction) ||
			(inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")) && !kubeletOwn {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// admitPVC: status updates changing only capacity, conditions and
// allocated resources.
func admitPVC(node string, a *registry.Attributes) error {
	if a.Subresource != "status" {
		return fmt.Errorf("may only update PVC status")
	}
	if a.Operation != registry.Update {
		return fmt.Errorf("unexpected operation %q", a.Operation)
	}
	old, ok := a.Old.(*corev1.PersistentVolumeClaim)
	if !ok {
		return fmt.Errorf("unexpected type %T", a.Old)
	}
	cur, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return fmt.Errorf("unexpected type %T", a.Object)
	}
	o, c := old.DeepCopy(), cur.DeepCopy()
	for _, p := range []*corev1.PersistentVolumeClaim{o, c} {
		p.ResourceVersion, p.ManagedFields = "", nil
		p.Status.Capacity, p.Status.Conditions = nil, nil
		p.Status.AllocatedResourceStatuses, p.Status.AllocatedResources = nil, nil
	}
	if !apiequality.Semantic.DeepEqual(o, c) {
		return fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %v", node, diffFields(o, c))
	}
	return nil
}

// diffFields names the top-level parts of a claim that differ.
func diffFields(a, b *corev1.PersistentVolumeClaim) string {
	var parts []string
	if !reflect.DeepEqual(a.ObjectMeta, b.ObjectMeta) {
		parts = append(parts, "metadata")
	}
	if !reflect.DeepEqual(a.Spec, b.Spec) {
		parts = append(parts, "spec")
	}
	if !reflect.DeepEqual(a.Status, b.Status) {
		parts = append(parts, "status")
	}
	return strings.Join(parts, ", ")
}

// token: only tokens bound to a current pod running on the node.
func (p *Plugin) token(ctx context.Context, env registry.Env, node string, tr *authenticationv1.TokenRequest, a *registry.Attributes) error {
	if a.Operation != registry.Create || a.Subresource != "token" {
		return nil
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return fmt.Errorf("node requested token not bound to a pod")
	}
	if ref.UID == "" {
		return fmt.Errorf("node requested token with a pod binding without a uid")
	}
	pod, err := getPod(ctx, env, a.Namespace, ref.Name)
	if err != nil {
		return err
	}
	if ref.UID != pod.UID {
		return fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
	}
	if pod.Spec.NodeName != node {
		return fmt.Errorf("node requested token bound to a pod scheduled on a different node")
	}
	return nil
}

// admitLease: the node's own Lease in kube-node-lease.
func admitLease(node string, l *coordinationv1.Lease, a *registry.Attributes) error {
	if a.Namespace != leaseNamespace {
		return fmt.Errorf("can only access leases in the %q system namespace", leaseNamespace)
	}
	name := a.Name
	if a.Operation == registry.Create {
		name = l.Name
	}
	if name != node {
		return fmt.Errorf("can only access node lease with the same name as the requesting node")
	}
	return nil
}

// admitCSINode: the node's own CSINode.
func admitCSINode(node string, c *storagev1.CSINode, a *registry.Attributes) error {
	name := a.Name
	if a.Operation == registry.Create {
		name = c.Name
	}
	if name == "" {
		return fmt.Errorf("unable to access the object name")
	}
	if name != node {
		return fmt.Errorf("can only access CSINode with the same name as the requesting node")
	}
	return nil
}

// admitSlice: ResourceSlices created or deleted only when they name the
// node.
func admitSlice(node string, s *resourcev1.ResourceSlice, a *registry.Attributes) error {
	names := s.Spec.NodeName != nil && *s.Spec.NodeName == node
	switch a.Operation {
	case registry.Create:
		if !names {
			return fmt.Errorf("can only create ResourceSlice with the same NodeName as the requesting node")
		}
	case registry.Delete:
		if !names {
			return fmt.Errorf("can only delete ResourceSlice with the same NodeName as the requesting node")
		}
	}
	return nil
}
