package discoverytest

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// scale marks a fixture as having a scale subresource; the discovery and
// OpenAPI packages only check Resource.Scale for nil.
type scale struct{}

func (scale) Replicas(runtime.Object) (int32, int32, string, error) { return 0, 0, "", nil }
func (scale) SetReplicas(runtime.Object, int32) error               { return nil }

// status marks a fixture as having a status subresource.
type status struct{}

func (status) PrepareForUpdate(obj, old runtime.Object) {}
func (status) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return nil
}

// Resources returns fresh descriptors for pods (status, binding),
// configmaps, nodes (cluster-scoped, status), deployments (status, scale)
// and leases, in that order.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			Version: "v1", Resource: "pods", Kind: "Pod", ListKind: "PodList", Singular: "pod",
			ShortNames: []string{"po"}, Categories: []string{"all"}, Namespaced: true,
			New:     func() runtime.Object { return &corev1.Pod{} },
			NewList: func() runtime.Object { return &corev1.PodList{} },
			Status:  status{},
			Subresources: []registry.Subresource{{
				Name: "binding", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Verbs: []string{"create"},
				Action: &registry.Action{NewBody: func() runtime.Object { return &corev1.Binding{} }},
			}},
		},
		{
			Version: "v1", Resource: "configmaps", Kind: "ConfigMap", ListKind: "ConfigMapList",
			Singular: "configmap", ShortNames: []string{"cm"}, Namespaced: true,
			New:     func() runtime.Object { return &corev1.ConfigMap{} },
			NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
		},
		{
			Version: "v1", Resource: "nodes", Kind: "Node", ListKind: "NodeList", Singular: "node",
			ShortNames: []string{"no"},
			New:        func() runtime.Object { return &corev1.Node{} },
			NewList:    func() runtime.Object { return &corev1.NodeList{} },
			Status:     status{},
		},
		{
			Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment",
			ListKind: "DeploymentList", Singular: "deployment", ShortNames: []string{"deploy"},
			Categories: []string{"all"}, Namespaced: true,
			New:     func() runtime.Object { return &appsv1.Deployment{} },
			NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
			Status:  status{}, Scale: scale{},
		},
		{
			Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease",
			ListKind: "LeaseList", Singular: "lease", Namespaced: true,
			New:     func() runtime.Object { return &coordinationv1.Lease{} },
			NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
		},
	}
}
