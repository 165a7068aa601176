package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidateResourcesFieldPaths: the errors of requests that do not fit
// their limits name the paths kube-apiserver v1.37.2 names (checked with
// --dry-run=server): requests or limits, not the resource's key.
func TestValidateResourcesFieldPaths(t *testing.T) {
	q := resource.MustParse
	for name, tc := range map[string]struct {
		r    corev1.ResourceRequirements
		want string
	}{
		"extended resource without a limit": {
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"example.com/foo": q("1")}},
			"spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
		},
		"extended resource request and limit differ": {
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"example.com/foo": q("1")}, Limits: corev1.ResourceList{"example.com/foo": q("2")}},
			`spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/foo limit of 2`,
		},
		"request over the limit": {
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("2")}, Limits: corev1.ResourceList{"cpu": q("1")}},
			`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
		},
		"negative request": {
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("-1")}},
			`spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			errs := ValidateResources(&tc.r, field.NewPath("spec", "containers").Index(0).Child("resources"))
			if len(errs) != 1 || errs[0].Error() != tc.want {
				t.Errorf("errors %q, want %q", errs, tc.want)
			}
		})
	}
	ok := corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}, Limits: corev1.ResourceList{"cpu": q("1")}}
	if errs := ValidateResources(&ok, field.NewPath("resources")); len(errs) != 0 {
		t.Errorf("a request equal to its limit: %v", errs)
	}
}
