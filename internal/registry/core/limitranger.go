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

// withPodLimitRanger sets a created pod's defaults from the namespace's
// LimitRanges, then runs next, the pods' own admission: in kube-apiserver
// LimitRanger is among the first mutating plugins.
func withPodLimitRanger(next registry.AdmitFunc) registry.AdmitFunc {
	return func(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
		if p, ok := a.Object.(*corev1.Pod); ok && a.Operation == registry.Create && a.Subresource == "" {
			ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
			if err != nil {
				return nil, err
			}
			limitranger.DefaultPod(p, ranges)
		}
		return next(ctx, env, a)
	}
}

// validatePodLimits is the pods' validating admission: a created pod must
// fit the namespace's LimitRanges (403 naming the pod), checked after
// validation as kube-apiserver's LimitRanger validates.
func validatePodLimits(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || a.Operation != registry.Create || a.Subresource != "" {
		return nil, nil
	}
	ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
	if err != nil || len(ranges) == 0 {
		return nil, err
	}
	if err := limitranger.ValidatePod(p, ranges, podRequests(&p.Spec), podLimits(&p.Spec)); err != nil {
		return nil, apierrors.NewForbidden(podsGR, admissionName(p.Name, p.GenerateName), err)
	}
	return nil, nil
}

// validateClaimLimits is the claims' validating admission: a claim's
// storage request must fit the namespace's LimitRanges, on create and
// update.
func validateClaimLimits(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	c, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || a.Subresource != "" || (a.Operation != registry.Create && a.Operation != registry.Update) {
		return nil, nil
	}
	ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
	if err != nil || len(ranges) == 0 {
		return nil, err
	}
	if err := limitranger.ValidateClaim(c, ranges); err != nil {
		return nil, apierrors.NewForbidden(pvcsGR, admissionName(c.Name, c.GenerateName), err)
	}
	return nil, nil
}

// namespaceLimitRanges lists the LimitRanges of ns.
func namespaceLimitRanges(ctx context.Context, env registry.Env, ns string) ([]*corev1.LimitRange, error) {
	objs := env.Objects(limitRangesGVR)
	if objs == nil || ns == "" {
		return nil, nil
	}
	list, err := registry.ListRecent(ctx, objs, ns)
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
