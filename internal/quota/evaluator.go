package quota

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// CountName is the object-count quota name of a resource:
// count/<resource> for the core group, count/<resource>.<group> otherwise.
func CountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCountNames are the names that counted objects of the core kinds
// before count/<resource> existed; a quota may still use them.
var legacyCountNames = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "services"}:               corev1.ResourceServices,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "persistentvolumeclaims"}: corev1.ResourcePersistentVolumeClaims,
}

// Evaluator returns res's evaluator: its kind's, or an object counter.
func Evaluator(res *registry.Resource) registry.QuotaEvaluator {
	if res.Quota != nil {
		return res.Quota
	}
	return NewObjectCounter(schema.GroupResource{Group: res.Group, Resource: res.Resource})
}

// ObjectCounter charges each object of a resource one count/<resource>
// (and its legacy name, for the core kinds that have one), on create. It
// matches no scope: a scoped quota does not count its objects.
type ObjectCounter struct {
	names []corev1.ResourceName
}

// NewObjectCounter returns the object counter of gr.
func NewObjectCounter(gr schema.GroupResource) *ObjectCounter {
	c := &ObjectCounter{names: []corev1.ResourceName{CountName(gr)}}
	if legacy, ok := legacyCountNames[gr]; ok {
		c.names = append(c.names, legacy)
	}
	return c
}

// MatchingResources implements registry.QuotaEvaluator.
func (c *ObjectCounter) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	return Intersection(names, c.names)
}

// Usage implements registry.QuotaEvaluator: one of each name.
func (c *ObjectCounter) Usage(runtime.Object, time.Time) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, n := range c.names {
		out[n] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return out, nil
}

// MatchesScope implements registry.QuotaEvaluator: no scope applies.
func (c *ObjectCounter) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

// Constraints implements registry.QuotaEvaluator: nothing is required.
func (c *ObjectCounter) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Handles implements registry.QuotaEvaluator: creates of the main resource.
func (c *ObjectCounter) Handles(op registry.Operation, sub string) bool {
	return op == registry.Create && sub == ""
}

// ScopeSelectors returns a quota's scopes as selector requirements (a
// scope in spec.scopes is the requirement "Exists").
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches reports whether q covers obj: q limits (in hard) a name the
// evaluator uses, and obj falls under every scope of q.
func Matches(q *corev1.ResourceQuota, hard corev1.ResourceList, ev registry.QuotaEvaluator, obj runtime.Object) (bool, error) {
	if len(ev.MatchingResources(Names(hard))) == 0 {
		return false, nil
	}
	for _, sel := range ScopeSelectors(q) {
		ok, err := ev.MatchesScope(sel, obj)
		if err != nil {
			return false, fmt.Errorf("matching scope %s of quota %s: %w", sel.ScopeName, q.Name, err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}
