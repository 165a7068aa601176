package core

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// pods/resize is a view of the pod through which only the containers'
// resources (and resize policies) change, with kube-apiserver v1.37's
// rules and its default feature gates (in-place resize of containers and
// sidecars on; of pod-level resources, plain init containers and
// memory-backed volumes off): cpu and memory only, none removed, the QoS
// class unchanged, containers neither added, removed, renamed nor
// reordered, and only on nodes that report container resources.

var specPath = field.NewPath("spec")

func resizeSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "resize", Kind: podGVK, Verbs: []string{"get", "patch", "update"},
		Update: strategy.TypedStatus[*corev1.Pod]{
			PrepareUpdate:  prepareResize,
			ValidateChange: validateResize,
		},
		ResetFields: [][]string{{"status"}},
	}
}

// prepareResize keeps everything of old but the containers' resources and
// resize policies; a request that adds, removes, renames or reorders
// containers is left as is for validation to refuse.
func prepareResize(p, old *corev1.Pod) {
	podspec.DefaultPod(p) // as kube-apiserver defaults the decoded pod
	s, o := &p.Spec, &old.Spec
	if len(s.Containers) != len(o.Containers) || len(s.InitContainers) != len(o.InitContainers) {
		return
	}
	containers, ok1 := resizedContainers(s.Containers, o.Containers)
	inits, ok2 := resizedContainers(s.InitContainers, o.InitContainers)
	if !ok1 || !ok2 {
		return
	}
	p.Spec = *o.DeepCopy()
	p.Spec.Containers, p.Spec.InitContainers = containers, inits
	p.Status = *old.Status.DeepCopy()
	strategy.ResetMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
}

// resizedContainers are old's containers with new's resources and resize
// policies; ok is false when a name differs.
func resizedContainers(cs, old []corev1.Container) ([]corev1.Container, bool) {
	if len(cs) == 0 {
		return cs, true
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if cs[i].Name != old[i].Name {
			return nil, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources, out[i].ResizePolicy = cs[i].Resources, cs[i].ResizePolicy
	}
	return out, true
}

func validateResize(p, old *corev1.Pod) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePod(p)...)
	switch {
	case hasAnnotation(old, mirrorPodAnnotation):
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	case old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows:
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	oldQOS := old.Status.QOSClass
	if oldQOS == "" {
		oldQOS = podspec.QOS(&old.Spec)
	}
	if oldQOS != podspec.QOS(&p.Spec) {
		errs = append(errs, field.Invalid(specPath, p.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !nodeReportsResources(old) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	if podLevelResources(old) || podLevelResources(p) {
		return append(errs, field.Forbidden(field.NewPath(""),
			"resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"))
	}
	if order := validateResizeOrder(p, old); len(order) > 0 {
		return append(errs, order...)
	}
	errs = append(errs, validateResizedContainers(p, old)...)
	if !apiequality.Semantic.DeepEqual(p.Spec.Volumes, old.Spec.Volumes) {
		errs = append(errs, field.Forbidden(specPath.Child("volumes"),
			"volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(errs) > 0 {
		return errs
	}
	if !resizeOnly(p, old) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

func hasAnnotation(p *corev1.Pod, key string) bool {
	_, ok := p.Annotations[key]
	return ok
}

// nodeReportsResources: a pod with a running container may be resized
// only once its node reports the containers' resources (a node that
// supports in-place resize).
func nodeReportsResources(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func podLevelResources(p *corev1.Pod) bool {
	r := p.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

// validateResizeOrder refuses added, removed, renamed or reordered
// containers.
func validateResizeOrder(p, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name     string
		cs, olds []corev1.Container
	}{{"containers", p.Spec.Containers, old.Spec.Containers}, {"initContainers", p.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(l.cs) != len(l.olds) {
			errs = append(errs, field.Forbidden(specPath.Child(l.name), l.name+" may not be added or removed on resize"))
			continue
		}
		for i := range l.olds {
			if l.cs[i].Name != l.olds[i].Name {
				errs = append(errs, field.Forbidden(specPath.Child(l.name).Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateResizedContainers checks each container: no request or limit
// removed, only cpu and memory changed; plain init containers unchanged.
func validateResizedContainers(p, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	for i := range old.Spec.InitContainers {
		c, o := &p.Spec.InitContainers[i], &old.Spec.InitContainers[i]
		ip := specPath.Child("initContainers").Index(i)
		if !isSidecarContainer(o) {
			if !apiequality.Semantic.DeepEqual(c, o) {
				errs = append(errs, field.Forbidden(specPath, "resources for non-sidecar init containers are immutable"))
			}
			continue
		}
		errs = append(errs, validateResourcesKept(&c.Resources, &o.Resources, ip.Child("resources"))...)
		if !sameButCPUMemory(c, o) {
			errs = append(errs, field.Forbidden(ip, "only cpu and memory resources for init or sidecar containers are mutable"))
		}
	}
	for i := range old.Spec.Containers {
		c, o := &p.Spec.Containers[i], &old.Spec.Containers[i]
		errs = append(errs, validateResourcesKept(&c.Resources, &o.Resources, specPath.Child("containers").Index(i).Child("resources"))...)
		if !sameButCPUMemory(c, o) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	return errs
}

func isSidecarContainer(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// validateResourcesKept refuses a resize that removes a request or limit.
func validateResourcesKept(r, old *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if removed(r.Requests, old.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if removed(r.Limits, old.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func removed(l, old corev1.ResourceList) bool {
	if len(old) > len(l) {
		return true
	}
	for name := range old {
		if _, ok := l[name]; !ok {
			return true
		}
	}
	return false
}

// sameButCPUMemory reports whether c differs from old only in its cpu and
// memory requests and limits.
func sameButCPUMemory(c, old *corev1.Container) bool {
	m := c.DeepCopy()
	m.Resources = corev1.ResourceRequirements{
		Limits:   withOldCPUMemory(c.Resources.Limits, old.Resources.Limits),
		Requests: withOldCPUMemory(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
	return apiequality.Semantic.DeepEqual(m, old)
}

// withOldCPUMemory is l with its cpu and memory as old has them.
func withOldCPUMemory(l, old corev1.ResourceList) corev1.ResourceList {
	if l == nil && old == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range l {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q.DeepCopy()
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// resizeOnly reports whether p's spec differs from old's only in its
// containers' cpu and memory.
func resizeOnly(p, old *corev1.Pod) bool {
	s := p.Spec.DeepCopy()
	for i := range s.Containers {
		c := &s.Containers[i]
		c.Resources.Limits = withOldCPUMemory(c.Resources.Limits, old.Spec.Containers[i].Resources.Limits)
		c.Resources.Requests = withOldCPUMemory(c.Resources.Requests, old.Spec.Containers[i].Resources.Requests)
	}
	for i := range s.InitContainers {
		if c := &s.InitContainers[i]; isSidecarContainer(c) {
			c.Resources.Limits = withOldCPUMemory(c.Resources.Limits, old.Spec.InitContainers[i].Resources.Limits)
			c.Resources.Requests = withOldCPUMemory(c.Resources.Requests, old.Spec.InitContainers[i].Resources.Requests)
		}
	}
	return apiequality.Semantic.DeepEqual(s, &old.Spec)
}

// admitPod is the pods' own admission, which runs after the server's
// admission chain (package admission): kube-apiserver's
// PodResizeValidator, which refuses a resize of a pod on a node that is
// not Linux or whose allocatable cpu or memory the pod's requests would
// exceed (403, with the cause UnsupportedPlatform or NodeCapacity). It
// runs after the resize's own checks, as a validating admission does: a
// resize they refuse is theirs to answer.
func admitPod(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Operation != registry.Update || a.Subresource != "resize" {
		return nil, nil
	}
	p, ok1 := a.Object.(*corev1.Pod)
	old, ok2 := a.Old.(*corev1.Pod)
	if !ok1 || !ok2 || p.Spec.NodeName == "" || apiequality.Semantic.DeepEqual(p.Spec, old.Spec) || len(validateResize(p, old)) > 0 {
		return nil, nil
	}
	obj, err := env.Objects(nodesGVR).Get(ctx, "", p.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewForbidden(podsGR, p.Name, fmt.Errorf("node %q not found", p.Spec.NodeName))
	}
	if err != nil {
		return nil, apierrors.NewForbidden(podsGR, p.Name, fmt.Errorf("failed to get node %q: %w", p.Spec.NodeName, err))
	}
	node := obj.(*corev1.Node)
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return nil, resizeRefusal(p.Name, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), "UnsupportedPlatform")
	}
	if err := fitsAllocatable(p, node.Status.Allocatable); err != nil {
		return nil, resizeRefusal(p.Name, err, "NodeCapacity")
	}
	return nil, nil
}

func resizeRefusal(name string, err error, cause metav1.CauseType) error {
	se := apierrors.NewForbidden(podsGR, name, err)
	se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Type: cause})
	return se
}

// fitsAllocatable refuses a pod whose cpu or memory requests exceed the
// node's allocatable.
func fitsAllocatable(p *corev1.Pod, alloc corev1.ResourceList) error {
	req := podRequests(&p.Spec)
	cpu, mem := req[corev1.ResourceCPU], req[corev1.ResourceMemory]
	var msgs []string
	if cpu.Cmp(*alloc.Cpu()) > 0 {
		msgs = append(msgs, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpu.MilliValue(), alloc.Cpu().MilliValue()))
	}
	if mem.Cmp(*alloc.Memory()) > 0 {
		msgs = append(msgs, fmt.Sprintf("memory, requested: %d, allocatable: %d", mem.Value(), alloc.Memory().Value()))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// podRequests are the pod's effective requests, as the scheduler counts
// them: pod-level requests when set; else the containers' and sidecars'
// sum, or a plain init container with the sidecars started before it when
// that is more; plus the pod's overhead.
func podRequests(s *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	if s.Resources != nil && len(s.Resources.Requests) > 0 {
		addResources(out, s.Resources.Requests)
	} else {
		for _, c := range s.Containers {
			addResources(out, c.Resources.Requests)
		}
		sidecars := corev1.ResourceList{}
		for _, c := range s.InitContainers {
			if isSidecarContainer(&c) {
				addResources(sidecars, c.Resources.Requests)
				addResources(out, c.Resources.Requests)
				continue
			}
			init := sidecars.DeepCopy()
			addResources(init, c.Resources.Requests)
			for name, q := range init {
				if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
					out[name] = q.DeepCopy()
				}
			}
		}
	}
	addResources(out, s.Overhead)
	return out
}

func addResources(sum, l corev1.ResourceList) {
	for name, q := range l {
		cur := sum[name]
		cur.Add(q)
		sum[name] = cur
	}
}
