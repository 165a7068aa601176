package client

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// NewDiscoveryRESTMapper returns a RESTMapper that maps kinds through the
// server's discovery documents, read with r. It reads the document of a
// group version once and remembers it; a kind missing from a remembered
// document (a CustomResourceDefinition established since) reads it again,
// and a failed read is not remembered.
func NewDiscoveryRESTMapper(r *rest.Client) RESTMapper {
	return &discoveryMapper{rest: r, lists: map[schema.GroupVersion]*metav1.APIResourceList{}}
}

type discoveryMapper struct {
	rest *rest.Client

	mu    sync.Mutex
	lists map[schema.GroupVersion]*metav1.APIResourceList
}

func (m *discoveryMapper) RESTMapping(ctx context.Context, gvk schema.GroupVersionKind) (Mapping, error) {
	gv := gvk.GroupVersion()
	m.mu.Lock()
	list, remembered := m.lists[gv]
	m.mu.Unlock()
	if remembered {
		if mp, ok := find(list, gvk); ok {
			return mp, nil
		}
	}
	list, err := m.rest.ServerResourcesForGroupVersion(ctx, gv)
	if apierrors.IsNotFound(err) {
		return Mapping{}, fmt.Errorf("map %s: the server does not serve %s: %w", gvk, gv, err)
	}
	if err != nil {
		return Mapping{}, fmt.Errorf("map %s: %w", gvk, err)
	}
	m.mu.Lock()
	m.lists[gv] = list
	m.mu.Unlock()
	if mp, ok := find(list, gvk); ok {
		return mp, nil
	}
	return Mapping{}, fmt.Errorf("map %s: the server serves no resource of that kind in %s", gvk, gv)
}

// find returns the mapping of gvk's resource (not a subresource) in list.
func find(list *metav1.APIResourceList, gvk schema.GroupVersionKind) (Mapping, bool) {
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			return Mapping{GVR: gvk.GroupVersion().WithResource(r.Name), Namespaced: r.Namespaced}, true
		}
	}
	return Mapping{}, false
}
