package manager

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// mapper resolves kinds to resources through discovery, reading each
// group version once and remembering it.
type mapper struct {
	client *rest.Client
	scheme *runtime.Scheme

	mu sync.Mutex
	// lists caches the discovery document of each group version read so
	// far; a failed read is not cached.
	lists map[schema.GroupVersion]*metav1.APIResourceList
}

func newMapper(c *rest.Client, s *runtime.Scheme) *mapper {
	return &mapper{client: c, scheme: s, lists: map[schema.GroupVersion]*metav1.APIResourceList{}}
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
	list, err := m.resources(ctx, gvk.GroupVersion())
	if err != nil {
		return Mapping{}, fmt.Errorf("map %s: %w", gvk, err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			return Mapping{GVK: gvk, GVR: gvk.GroupVersion().WithResource(r.Name), Namespaced: r.Namespaced}, nil
		}
	}
	return Mapping{}, fmt.Errorf("map %s: the server serves no resource of that kind in %s", gvk, gvk.GroupVersion())
}

func (m *mapper) resources(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	m.mu.Lock()
	list, ok := m.lists[gv]
	m.mu.Unlock()
	if ok {
		return list, nil
	}
	list, err := m.client.ServerResourcesForGroupVersion(ctx, gv)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the server does not serve %s: %w", gv, err)
		}
		return nil, err
	}
	m.mu.Lock()
	m.lists[gv] = list
	m.mu.Unlock()
	return list, nil
}
