package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The resource names Kubernetes knows, as its core helper lists them: what
// quotas track, what limits and requests name, what counts in integers.
var (
	standardQuotaResources = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
		corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas,
		corev1.ResourceServices, corev1.ResourceReplicationControllers, corev1.ResourceSecrets,
		corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps, corev1.ResourceServicesNodePorts,
		corev1.ResourceServicesLoadBalancers,
	)
	standardResources = standardQuotaResources.Clone().Insert(corev1.ResourceStorage)
	integerResources  = sets.New(
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
)

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isQuotaHugePages(name corev1.ResourceName) bool {
	return isHugePages(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isNativeResource: no domain, or a kubernetes.io one.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResource: a fully qualified name outside kubernetes.io that
// still makes a valid quota name with "requests." in front.
func isExtendedResource(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

func isIntegerResource(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResource(name)
}

func isStandardQuotaResource(name corev1.ResourceName) bool {
	return standardQuotaResources.Has(name) || isQuotaHugePages(name)
}

func hasDomain(name string) bool { return strings.Contains(name, "/") }

// validateResourceName requires a qualified name, and a name without a
// domain to be one Kubernetes knows.
func validateResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !hasDomain(string(name)) && !standardResources.Has(name) && !isQuotaHugePages(name) {
		return field.ErrorList{field.Invalid(p, name, "must be a standard resource type or fully qualified")}
	}
	return nil
}

// validateContainerResourceName is validateResourceName for what a
// container (or a pod) may request.
func validateContainerResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	switch {
	case !hasDomain(string(name)):
		if !standardContainerResources.Has(name) && !isHugePages(name) {
			return append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
	case !isNativeResource(name):
		if !isExtendedResource(name) {
			return append(errs, field.Invalid(p, name, "doesn't follow extended resource name standard"))
		}
	}
	return errs
}

// validateQuotaResourceName is validateResourceName for what a quota may
// track.
func validateQuotaResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := validateResourceName(name, p)
	if !hasDomain(string(name)) && !isStandardQuotaResource(name) {
		return append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

// validateQuantityFor requires a quantity that is not negative, and whole
// for resources counted in integers (pods, services, extended resources).
func validateQuantityFor(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q, "must be an integer"))
	}
	return errs
}
