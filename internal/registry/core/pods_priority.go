package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

var priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

// admitPodPriority is kube-apiserver's Priority admission for pods. On
// create it resolves spec.priority (and spec.preemptionPolicy) from
// spec.priorityClassName, or from the globalDefault class (the lowest
// valued one if several claim it; without one, priority 0 and
// PreemptLowerPriority) when the pod names none; a missing class, or a
// priority or preemption policy that differs from the class's, is
// refused with 403. On update it keeps the resolved values a client left
// out.
func admitPodPriority(ctx context.Context, env registry.Env, a *registry.Attributes) error {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || a.Subresource != "" {
		return nil
	}
	if a.Operation == registry.Update {
		if old, ok := a.Old.(*corev1.Pod); ok {
			if p.Spec.Priority == nil {
				p.Spec.Priority = old.Spec.Priority
			}
			if p.Spec.PreemptionPolicy == nil {
				p.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
			}
		}
		return nil
	}
	if a.Operation != registry.Create {
		return nil
	}
	name, value, policy, err := resolvePriority(ctx, env, p)
	if err != nil {
		return err
	}
	p.Spec.PriorityClassName = name
	if p.Spec.Priority != nil && *p.Spec.Priority != value {
		return apierrors.NewForbidden(podsGR, p.Name, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *p.Spec.Priority, value))
	}
	p.Spec.Priority = &value
	if policy != nil {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != *policy {
			return apierrors.NewForbidden(podsGR, p.Name, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, *policy))
		}
		p.Spec.PreemptionPolicy = policy
	}
	return nil
}

// resolvePriority returns the class name, priority and preemption policy
// the pod gets.
func resolvePriority(ctx context.Context, env registry.Env, p *corev1.Pod) (string, int32, *corev1.PreemptionPolicy, error) {
	classes := env.Objects(priorityClassesGVR)
	lower := corev1.PreemptLowerPriority
	if classes == nil {
		return p.Spec.PriorityClassName, 0, &lower, nil
	}
	if name := p.Spec.PriorityClassName; name != "" {
		obj, err := classes.Get(ctx, "", name)
		if apierrors.IsNotFound(err) {
			return "", 0, nil, apierrors.NewForbidden(podsGR, p.Name, fmt.Errorf("no PriorityClass with name %s was found", name))
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
	var def *schedulingv1.PriorityClass
	for _, obj := range list {
		if pc := obj.(*schedulingv1.PriorityClass); pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
			def = pc
		}
	}
	if def == nil {
		return "", 0, &lower, nil
	}
	return def.Name, def.Value, def.PreemptionPolicy, nil
}

// listCached lists from the watch cache when the server offers it (kube's
// Priority admission reads an informer), else consistently.
func listCached(ctx context.Context, objs registry.Objects) ([]runtime.Object, error) {
	if cl, ok := objs.(registry.CachedLister); ok {
		return cl.ListCached(ctx, "", nil, nil)
	}
	return objs.List(ctx, "", nil, nil)
}
