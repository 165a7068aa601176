package manager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/rest"
)

// Mapping is where a kind lives on the server.
type Mapping struct {
	GVK        schema.GroupVersionKind
	GVR        schema.GroupVersionResource
	Namespaced bool
}

// String names the resource as sync errors do: "apps/v1 deployments",
// "v1 configmaps".
func (m Mapping) String() string { return describe(m.GVR) }

func describe(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + " " + gvr.Resource
}

// mapper resolves kinds to resources through discovery (the client
// package's mapper: each group version read once and remembered, read
// again when a kind is missing from it) and kinds of objects through the
// scheme.
type mapper struct {
	discovery client.RESTMapper
	scheme    *runtime.Scheme
}

func newMapper(c *rest.Client, s *runtime.Scheme) *mapper {
	return &mapper{discovery: client.NewDiscoveryRESTMapper(c), scheme: s}
}

// kindFor returns the GroupVersionKind of obj: from the scheme for typed
// objects, from the object itself for unstructured ones.
func (m *mapper) kindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" {
			return gvk, fmt.Errorf("unstructured object without apiVersion/kind")
		}
		return gvk, nil
	}
	kinds, _, err := m.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind of %T: %w", obj, err)
	}
	return kinds[0], nil
}

// mappingFor resolves gvk to its resource and scope.
func (m *mapper) mappingFor(ctx context.Context, gvk schema.GroupVersionKind) (Mapping, error) {
	mp, err := m.discovery.RESTMapping(ctx, gvk)
	if err != nil {
		return Mapping{}, err
	}
	return Mapping{GVK: gvk, GVR: mp.GVR, Namespaced: mp.Namespaced}, nil
}
