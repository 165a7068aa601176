package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// resourceTable returns the table of a resource.k8s.io/v1 kind, nil for
// none.
func resourceTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "DeviceClass":
		return newTable(nameAgeColumns, func(c *resourcev1.DeviceClass, now time.Time) []interface{} {
			return []interface{}{c.Name, age(c.CreationTimestamp, now)}
		}, now)
	case "ResourceClaimTemplate":
		return newTable(nameAgeColumns, func(t *resourcev1.ResourceClaimTemplate, now time.Time) []interface{} {
			return []interface{}{t.Name, age(t.CreationTimestamp, now)}
		}, now)
	case "ResourceClaim":
		return newTable(resourceClaimColumns, func(c *resourcev1.ResourceClaim, now time.Time) []interface{} {
			return []interface{}{c.Name, resourceClaimState(c), age(c.CreationTimestamp, now)}
		}, now)
	case "ResourceSlice":
		return newTable(resourceSliceColumns, func(s *resourcev1.ResourceSlice, now time.Time) []interface{} {
			node := ""
			if s.Spec.NodeName != nil {
				node = *s.Spec.NodeName
			}
			return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, age(s.CreationTimestamp, now)}
		}, now)
	case "DeviceTaintRule":
		return newTable(deviceTaintRuleColumns, func(r *resourcev1.DeviceTaintRule, now time.Time) []interface{} {
			t := &r.Spec.Taint
			added := ""
			if t.TimeAdded != nil {
				added = age(*t.TimeAdded, now)
			}
			return []interface{}{r.Name, t.Key, t.Value, string(t.Effect), added, age(r.CreationTimestamp, now)}
		}, now)
	}
	return nil
}

var (
	nameAgeColumns       = []metav1.TableColumnDefinition{nameColumn(0), ageColumn}
	resourceClaimColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("State", "string", "Whether the claim is pending, allocated, reserved or deleted."), ageColumn,
	}
	resourceSliceColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("Node", "string", "The node of the slice's devices."), column("Driver", "string", "The driver of the devices."),
		column("Pool", "string", "The pool of the devices."), ageColumn,
	}
	deviceTaintRuleColumns = []metav1.TableColumnDefinition{
		nameColumn(0), column("Key", "string", "The taint key."), column("Value", "string", "The taint value."),
		column("Effect", "string", "The taint effect."), column("TimeAdded", "string", "Time since the taint was added."), ageColumn,
	}
)

// resourceClaimState joins deleted, pending (not allocated), allocated and
// reserved, as kube-apiserver prints them.
func resourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil && c.DeletionTimestamp == nil:
		states = append(states, "pending")
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}
