package runtimeclass

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "RuntimeClass"

var runtimeClassesGVR = nodev1.SchemeGroupVersion.WithResource("runtimeclasses")

// Plugin is RuntimeClass: mutating (overhead, scheduling) and validating
// (overhead).
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// pod returns the created pod a is about, nil when the plugin ignores a.
func pod(a *registry.Attributes) *corev1.Pod {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || a.Operation != registry.Create || !admission.Is(a, "", "pods") {
		return nil
	}
	return p
}

// Admit sets the pod's overhead and scheduling from its class.
func (Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p := pod(a)
	if p == nil {
		return nil, nil
	}
	rc, err := class(ctx, env, a, p)
	if err != nil || rc == nil {
		return nil, err
	}
	if rc.Overhead != nil {
		if len(p.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, p.Spec.Overhead) {
			return nil, admission.Forbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		p.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if rc.Scheduling == nil {
		return nil, nil
	}
	if err := mergeNodeSelector(p, rc.Scheduling.NodeSelector); err != nil {
		return nil, admission.Forbidden(a, err)
	}
	p.Spec.Tolerations = MergeTolerations(p.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil, nil
}

// Validate refuses an overhead that is not the class's.
func (Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p := pod(a)
	if p == nil {
		return nil, nil
	}
	rc, err := class(ctx, env, a, p)
	if err != nil {
		return nil, err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, p.Spec.Overhead) {
			return nil, admission.Forbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		return nil, nil
	}
	if p.Spec.Overhead != nil {
		return nil, admission.Forbidden(a, errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil, nil
}

// class returns the pod's RuntimeClass (nil when it names none).
func class(ctx context.Context, env registry.Env, a *registry.Attributes, p *corev1.Pod) (*nodev1.RuntimeClass, error) {
	if p.Spec.RuntimeClassName == nil {
		return nil, nil
	}
	name := *p.Spec.RuntimeClassName
	objs := env.Objects(runtimeClassesGVR)
	if objs == nil {
		return nil, admission.Forbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	obj, err := registry.GetCached(ctx, objs, "", name)
	if apierrors.IsNotFound(err) {
		return nil, admission.Forbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	if err != nil {
		return nil, err
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("runtime class %s: unexpected %T", name, obj))
	}
	return rc, nil
}

// mergeNodeSelector adds the class's node selector to the pod's; a key
// the pod sets to another value is a conflict.
func mergeNodeSelector(p *corev1.Pod, class map[string]string) error {
	if len(class) == 0 {
		return nil
	}
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = make(map[string]string, len(class))
	}
	keys := make([]string, 0, len(class))
	for k := range class {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := p.Spec.NodeSelector[k]; ok && v != class[k] {
			return fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, class[k], k, v)
		}
	}
	for _, k := range keys {
		p.Spec.NodeSelector[k] = class[k]
	}
	return nil
}
