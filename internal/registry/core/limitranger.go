package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/admission/limitranger"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

var limitRangesGVR = corev1.SchemeGroupVersion.WithResource("limitranges")

// withPodLimitRanger runs the LimitRanger on a pod create (defaults, then
// checks against the namespace's LimitRanges), then next, the pods' own
// admission: in kube-apiserver LimitRanger is among the first mutating
// plugins. A refusal is a 403 naming the pod.
func withPodLimitRanger(next registry.AdmitFunc) registry.AdmitFunc {
	return func(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
		if p, ok := a.Object.(*corev1.Pod); ok && a.Operation == registry.Create && a.Subresource == "" {
			ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
			if err != nil {
				return nil, err
			}
			if len(ranges) > 0 {
				limitranger.DefaultPod(p, ranges)
				if err := limitranger.ValidatePod(p, ranges, podRequests(&p.Spec), podLimits(&p.Spec)); err != nil {
					return nil, apierrors.NewForbidden(podsGR, admissionName(p.Name, p.GenerateName), err)
				}
			}
		}
		return next(ctx, env, a)
	}
}

// withClaimLimitRanger checks a claim's storage request against the
// namespace's LimitRanges on create and update, then runs next.
func withClaimLimitRanger(next registry.AdmitFunc) registry.AdmitFunc {
	return func(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
		if c, ok := a.Object.(*corev1.PersistentVolumeClaim); ok && a.Subresource == "" &&
			(a.Operation == registry.Create || a.Operation == registry.Update) {
			ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
			if err != nil {
				return nil, err
			}
			if err := limitranger.ValidateClaim(c, ranges); err != nil {
				return nil, apierrors.NewForbidden(pvcsGR, admissionName(c.Name, c.GenerateName), err)
			}
		}
		return next(ctx, env, a)
	}
}

// namespaceLimitRanges lists the LimitRanges of ns.
func namespaceLimitRanges(ctx context.Context, env registry.Env, ns string) ([]*corev1.LimitRange, error) {
	objs := env.Objects(limitRangesGVR)
	if objs == nil || ns == "" {
		return nil, nil
	}
	list, err := objs.List(ctx, ns, nil, nil)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("listing limit ranges of %s: %w", ns, err))
	}
	out := make([]*corev1.LimitRange, 0, len(list))
	for _, o := range list {
		if lr, ok := o.(*corev1.LimitRange); ok {
			out = append(out, lr)
		}
	}
	return out, nil
}

// admissionName is the name an admission refusal gives: the object's, its
// generateName, or "Unknown", as kube-apiserver.
func admissionName(name, generateName string) string {
	switch {
	case name != "":
		return name
	case generateName != "":
		return generateName
	}
	return "Unknown"
}
