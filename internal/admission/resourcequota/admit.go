package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

var quotasGVR = corev1.SchemeGroupVersion.WithResource("resourcequotas")

// ignored are resources quota admission never looks at, as Kubernetes'.
var ignored = map[schema.GroupResource]bool{{Resource: "events"}: true}

// charge is what one quota was charged for a write.
type charge struct {
	name  string
	usage corev1.ResourceList
}

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "ResourceQuota"

// Plugin is ResourceQuota, the last validating plugin.
type Plugin struct{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// Validate checks the write a against the quotas of its namespace and
// charges them; the Txn gives the charges back when the write is not
// stored.
func (Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	res := a.Resource
	if res == nil || !res.Namespaced || a.Namespace == "" || a.Operation == registry.Delete || a.Object == nil {
		return nil, nil
	}
	gr := schema.GroupResource{Group: res.Group, Resource: res.Resource}
	ev := quota.Evaluator(res)
	if ignored[gr] || !ev.Handles(a.Operation, a.Subresource) {
		return nil, nil
	}
	objs := env.Objects(quotasGVR)
	if objs == nil {
		return nil, nil
	}
	list, err := registry.ListRecent(ctx, objs, a.Namespace)
	if err != nil {
		return nil, fmt.Errorf("resource quota admission: listing quotas of %s: %w", a.Namespace, err)
	}
	if len(list) == 0 {
		return nil, nil
	}
	deltas, err := deltas(env, gr, ev, list, a)
	if err != nil || len(deltas) == 0 {
		return nil, err
	}
	return chargeAll(ctx, objs, gr, a, deltas)
}

// deltas returns, per covering quota, what the write adds to its usage
// (refusing an object the quota's constraints refuse).
func deltas(env registry.Env, gr schema.GroupResource, ev registry.QuotaEvaluator, list []runtime.Object, a *registry.Attributes) ([]charge, error) {
	now := env.Clock().Now()
	var covering []*corev1.ResourceQuota
	for _, o := range list {
		q := o.(*corev1.ResourceQuota)
		ok, err := quota.Matches(q, q.Status.Hard, ev, a.Object)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !ok {
			continue
		}
		restricted := ev.MatchingResources(quota.Names(q.Status.Hard))
		if err := ev.Constraints(restricted, a.Object); err != nil {
			return nil, forbidden(gr, a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		for _, r := range restricted {
			if _, ok := q.Status.Used[r]; !ok {
				return nil, forbidden(gr, a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.NamesString(restricted)))
			}
		}
		covering = append(covering, q)
	}
	if len(covering) == 0 {
		return nil, nil
	}
	usage, err := ev.Usage(a.Object, now)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if neg := quota.Negative(usage); len(neg) > 0 {
		return nil, forbidden(gr, a, fmt.Errorf("quota usage is negative for resource(s): %s", quota.NamesString(neg)))
	}
	var prev corev1.ResourceList
	if a.Operation == registry.Update && a.Old != nil {
		if m, err := meta.Accessor(a.Old); err == nil && m.GetResourceVersion() != "" {
			if prev, err = ev.Usage(a.Old, now); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
	}
	var out []charge
	for _, q := range covering {
		d := usage
		if prev != nil {
			if was, err := quota.Matches(q, q.Status.Hard, ev, a.Old); err == nil && was {
				d = quota.SubtractNonNegative(usage, prev)
			}
		}
		d = quota.Mask(quota.RemoveZeros(d), quota.Names(q.Status.Hard))
		if len(d) > 0 {
			out = append(out, charge{name: q.Name, usage: d})
		}
	}
	return out, nil
}

// chargeAll adds each delta to its quota's status.used, refusing when that
// passes status.hard; a refusal gives back what was charged before it.
func chargeAll(ctx context.Context, objs registry.Objects, gr schema.GroupResource, a *registry.Attributes, deltas []charge) (*registry.Txn, error) {
	var done []charge
	release := func() {
		for _, c := range done {
			if err := uncharge(objs, a.Namespace, c, a.DryRun); err != nil {
				slog.Warn("resource quota admission: giving back a charge", "namespace", a.Namespace, "quota", c.name, "err", err)
			}
		}
	}
	for _, c := range deltas {
		if err := chargeOne(ctx, objs, gr, a, c); err != nil {
			release()
			if apierrors.IsNotFound(err) {
				continue // deleted meanwhile: it limits nothing
			}
			return nil, err
		}
		done = append(done, c)
	}
	if len(done) == 0 || a.DryRun {
		return nil, nil
	}
	return &registry.Txn{Revert: release}, nil
}

// chargeOne is one quota's compare-and-swap: checked and written on the
// quota as stored, again on a newer one when a concurrent write wins.
func chargeOne(ctx context.Context, objs registry.Objects, gr schema.GroupResource, a *registry.Attributes, c charge) error {
	_, err := objs.Mutate(ctx, a.Namespace, c.name, func(obj runtime.Object) error {
		q := obj.(*corev1.ResourceQuota)
		requested := quota.Mask(c.usage, quota.Names(q.Status.Hard))
		used := quota.Add(q.Status.Used, requested)
		if a.Subresource != "status" {
			if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.Names(requested)), q.Status.Hard); !ok {
				return forbidden(gr, a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					quota.String(quota.Mask(requested, exceeded)), quota.String(quota.Mask(q.Status.Used, exceeded)),
					quota.String(quota.Mask(q.Status.Hard, exceeded))))
			}
		}
		q.Status.Used = used
		return nil
	}, a.DryRun)
	return err
}

// uncharge gives a charge back (never below zero), outside the request's
// context: the request may be over.
func uncharge(objs registry.Objects, ns string, c charge, dryRun bool) error {
	if dryRun {
		return nil
	}
	_, err := objs.Mutate(context.Background(), ns, c.name, func(obj runtime.Object) error {
		q := obj.(*corev1.ResourceQuota)
		back := quota.SubtractNonNegative(quota.Mask(q.Status.Used, quota.Names(c.usage)), c.usage)
		used := quota.Add(q.Status.Used, nil)
		for k, v := range back {
			used[k] = v
		}
		q.Status.Used = used
		return nil
	}, false)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// forbidden is kube-apiserver's admission refusal: 403 naming the object
// (its name, its generateName, or "Unknown").
func forbidden(gr schema.GroupResource, a *registry.Attributes, err error) error {
	name := a.Name
	if m, merr := meta.Accessor(a.Object); name == "" && merr == nil {
		name = m.GetName()
		if name == "" {
			name = m.GetGenerateName()
		}
	}
	if name == "" {
		name = "Unknown"
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return err
	}
	return apierrors.NewForbidden(gr, name, err)
}
