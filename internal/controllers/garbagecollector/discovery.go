package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// apiResource is one served resource as discovery describes it.
type apiResource struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
	verbs      []string
	preferred  bool // served in its group's preferred version
}

func (r apiResource) supports(verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.verbs, v) {
			return false
		}
	}
	return true
}

// discover lists every resource (subresources excluded) of every served
// group version. A group version that fails is skipped and its error
// joined into err: the result is partial, not empty.
func discover(ctx context.Context, c *rest.Client) ([]apiResource, error) {
	groups, err := c.ServerGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []apiResource
	var errs []error
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			gv, err := schema.ParseGroupVersion(v.GroupVersion)
			if err != nil {
				errs = append(errs, fmt.Errorf("discovery: group version %q: %w", v.GroupVersion, err))
				continue
			}
			list, err := c.ServerResourcesForGroupVersion(ctx, gv)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, r := range list.APIResources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				out = append(out, apiResource{gvr: gv.WithResource(r.Name), gvk: gv.WithKind(r.Kind),
					namespaced: r.Namespaced, verbs: r.Verbs, preferred: v.GroupVersion == g.PreferredVersion.GroupVersion})
			}
		}
	}
	return out, errors.Join(errs...)
}

// mapper resolves the kinds named by owner references to resources. It is
// refreshed by every discovery and safe for concurrent use.
type mapper struct {
	mu sync.RWMutex
	// kinds maps each served group/version/kind to its resource;
	// groupKinds maps a group/kind to its preferred version's resource.
	kinds      map[schema.GroupVersionKind]apiResource
	groupKinds map[schema.GroupKind]apiResource
}

func (m *mapper) update(rs []apiResource) {
	kinds := map[schema.GroupVersionKind]apiResource{}
	groupKinds := map[schema.GroupKind]apiResource{}
	for _, r := range rs {
		kinds[r.gvk] = r
		if _, ok := groupKinds[r.gvk.GroupKind()]; !ok || r.preferred {
			groupKinds[r.gvk.GroupKind()] = r
		}
	}
	m.mu.Lock()
	m.kinds, m.groupKinds = kinds, groupKinds
	m.mu.Unlock()
}

// errNoMapping reports a kind discovery does not know (yet).
var errNoMapping = errors.New("no resource for kind")

// resourceFor maps an apiVersion and kind to a resource: the exact
// version if served, else the group's preferred version.
func (m *mapper) resourceFor(apiVersion, kind string) (apiResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiResource{}, fmt.Errorf("parse apiVersion %q: %w", apiVersion, err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if r, ok := m.kinds[gv.WithKind(kind)]; ok {
		return r, nil
	}
	if r, ok := m.groupKinds[schema.GroupKind{Group: gv.Group, Kind: kind}]; ok {
		return r, nil
	}
	return apiResource{}, fmt.Errorf("%w %s, %s", errNoMapping, apiVersion, kind)
}
