package limitranger

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "LimitRanger"

var limitRangesGVR = corev1.SchemeGroupVersion.WithResource("limitranges")

// Plugin is the LimitRanger admission plugin: mutating (DefaultPod) and
// validating (ValidatePod, ValidateClaim).
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Admit sets a created pod's defaults from the namespace's LimitRanges.
func (Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	p, ok := a.Object.(*corev1.Pod)
	if !ok || a.Operation != registry.Create || !admission.Is(a, "", "pods") {
		return nil, nil
	}
	ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
	if err != nil {
		return nil, err
	}
	DefaultPod(p, ranges)
	return nil, nil
}

// Validate refuses (403) a created pod that does not fit the namespace's
// LimitRanges, and a created or updated claim whose storage request does
// not.
func (Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	switch obj := a.Object.(type) {
	case *corev1.Pod:
		if a.Operation != registry.Create || !admission.Is(a, "", "pods") {
			return nil, nil
		}
		ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
		if err != nil || len(ranges) == 0 {
			return nil, err
		}
		if err := ValidatePod(obj, ranges, core.PodRequests(&obj.Spec), core.PodLimits(&obj.Spec)); err != nil {
			return nil, admission.Forbidden(a, err)
		}
	case *corev1.PersistentVolumeClaim:
		if (a.Operation != registry.Create && a.Operation != registry.Update) || !admission.Is(a, "", "persistentvolumeclaims") {
			return nil, nil
		}
		ranges, err := namespaceLimitRanges(ctx, env, a.Namespace)
		if err != nil || len(ranges) == 0 {
			return nil, err
		}
		if err := ValidateClaim(obj, ranges); err != nil {
			return nil, admission.Forbidden(a, err)
		}
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
