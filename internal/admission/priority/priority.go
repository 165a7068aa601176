package priority

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "Priority"

var priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

// Plugin is Priority: mutating for pods, validating for PriorityClasses.
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit resolves a pod's priority.
func (Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || !admission.Is(a, "", "pods") {
		return nil, nil
	}
	switch a.Operation {
	case registry.Update:
		if old, ok := a.Old.(*corev1.Pod); ok {
			if p.Spec.Priority == nil {
				p.Spec.Priority = old.Spec.Priority
			}
			if p.Spec.PreemptionPolicy == nil {
				p.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
			}
		}
	case registry.Create:
		return nil, admitNewPod(ctx, env, a, p)
	}
	return nil, nil
}

// admitNewPod sets a created pod's priority from its class.
func admitNewPod(ctx context.Context, env registry.Env, a *registry.Attributes, p *corev1.Pod) error {
	name, value, policy, err := resolve(ctx, env, a, p)
	if err != nil {
		return err
	}
	p.Spec.PriorityClassName = name
	if p.Spec.Priority != nil && *p.Spec.Priority != value {
		return admission.Forbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p.Spec.Priority, value))
	}
	p.Spec.Priority = &value
	if policy != nil {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != *policy {
			return admission.Forbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, *policy))
		}
		p.Spec.PreemptionPolicy = policy
	}
	return nil
}

// resolve returns the class name, priority and preemption policy the pod
// gets.
func resolve(ctx context.Context, env registry.Env, a *registry.Attributes, p *corev1.Pod) (string, int32, *corev1.PreemptionPolicy, error) {
	classes := env.Objects(priorityClassesGVR)
	lower := corev1.PreemptLowerPriority
	if classes == nil {
		return p.Spec.PriorityClassName, 0, &lower, nil
	}
	if name := p.Spec.PriorityClassName; name != "" {
		obj, err := classes.Get(ctx, "", name)
		if apierrors.IsNotFound(err) {
			return "", 0, nil, admission.Forbidden(a, fmt.Errorf("no PriorityClass with name %s was found", name))
		}
		if err != nil {
			return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("failed to resolve PriorityClass with name %s: %w", name, err))
		}
		pc := obj.(*schedulingv1.PriorityClass)
		return name, pc.Value, pc.PreemptionPolicy, nil
	}
	list, err := listCached(ctx, classes)
	if err != nil {
		return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("error occurred while retrieving default priority class: %w", err))
	}
	def := globalDefault(list)
	if def == nil {
		return "", 0, &lower, nil
	}
	return def.Name, def.Value, def.PreemptionPolicy, nil
}

// globalDefault is the default class of list: with more than one (a
// race), the one of lowest value.
func globalDefault(list []runtime.Object) *schedulingv1.PriorityClass {
	var def *schedulingv1.PriorityClass
	for _, obj := range list {
		if pc, ok := obj.(*schedulingv1.PriorityClass); ok && pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = pc
		}
	}
	return def
}

// listCached lists from the watch cache when the server offers it (kube's
// Priority admission reads an informer), else consistently.
func listCached(ctx context.Context, objs registry.Objects) ([]runtime.Object, error) {
	if cl, ok := objs.(registry.CachedLister); ok {
		return cl.ListCached(ctx, "", nil, nil)
	}
	return objs.List(ctx, "", nil, nil)
}

// Validate refuses a second global default PriorityClass.
func (Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !admission.Is(a, "scheduling.k8s.io", "priorityclasses") || !pc.GlobalDefault {
		return nil, nil
	}
	if a.Operation != registry.Create && a.Operation != registry.Update {
		return nil, nil
	}
	objs := env.Objects(priorityClassesGVR)
	if objs == nil {
		return nil, nil
	}
	list, err := objs.List(ctx, "", nil, nil)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("list priority classes: %w", err))
	}
	if def := globalDefault(list); def != nil && (a.Operation == registry.Create || def.Name != pc.Name) {
		return nil, apierrors.NewForbidden(priorityClassesGVR.GroupResource(), pc.Name,
			fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil, nil
}
