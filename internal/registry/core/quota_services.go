package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// serviceQuota is the services' part in ResourceQuota, as Kubernetes'
// service evaluator: every service uses services and count/services; a
// LoadBalancer one services.loadbalancers=1; NodePort and LoadBalancer
// ones a node port per port (a LoadBalancer that allocates no node ports:
// those its ports name).
type serviceQuota struct{}

var serviceQuotaNames = []corev1.ResourceName{
	corev1.ResourceServices, "count/services", corev1.ResourceServicesLoadBalancers, corev1.ResourceServicesNodePorts,
}

func (serviceQuota) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(names, serviceQuotaNames)
}

func (serviceQuota) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("service quota: unexpected %T", obj)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	out := corev1.ResourceList{
		corev1.ResourceServices: one, "count/services": one.DeepCopy(),
		corev1.ResourceServicesLoadBalancers: resource.Quantity{Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     resource.Quantity{Format: resource.DecimalSI},
	}
	ports := int64(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		out[corev1.ResourceServicesLoadBalancers] = one.DeepCopy()
	}
	return out, nil
}

func (serviceQuota) MatchesScope(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

func (serviceQuota) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Handles: creates and updates (a type change uses or frees ports).
func (serviceQuota) Handles(op registry.Operation, sub string) bool {
	return sub == "" && (op == registry.Create || op == registry.Update)
}
