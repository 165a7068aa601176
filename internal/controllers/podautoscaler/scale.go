package podautoscaler

import (
	"context"
	"fmt"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// scaleClient reads and writes the scale subresource of any kind that has
// one (Deployments, ReplicaSets, StatefulSets, ReplicationControllers,
// custom resources with a scale subresource), its resource found by
// discovery as kube-controller-manager's REST mapper finds it: the
// reference's version first, then the group's other versions.
type scaleClient struct {
	client *rest.Client
	mu     sync.Mutex
	// kinds caches discovery: per group-version, kind → resource.
	kinds map[schema.GroupVersion]map[string]mapping
}

// mapping is a kind's resource and whether it serves scale.
type mapping struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	scale      bool
}

func newScaleClient(c *rest.Client) *scaleClient {
	return &scaleClient{client: c, kinds: map[schema.GroupVersion]map[string]mapping{}}
}

// mappings returns the resources of kind in group, the given version
// first; an error like the REST mapper's when there is none.
func (s *scaleClient) mappings(ctx context.Context, gv schema.GroupVersion, kind string) ([]mapping, error) {
	versions := []string{gv.Version}
	groups, err := s.client.ServerGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version != gv.Version {
				versions = append(versions, v.Version)
			}
		}
	}
	var out []mapping
	for _, v := range versions {
		byKind, err := s.kindsOf(ctx, schema.GroupVersion{Group: gv.Group, Version: v})
		if err != nil {
			return nil, err
		}
		if m, ok := byKind[kind]; ok {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no matches for kind %q in group %q", kind, gv.Group)
	}
	return out, nil
}

// kindsOf reads (once) the resources of a group-version.
func (s *scaleClient) kindsOf(ctx context.Context, gv schema.GroupVersion) (map[string]mapping, error) {
	s.mu.Lock()
	byKind, ok := s.kinds[gv]
	s.mu.Unlock()
	if ok {
		return byKind, nil
	}
	list, err := s.client.ServerResourcesForGroupVersion(ctx, gv)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", gv, err)
	}
	subs := map[string]bool{}
	for _, r := range list.APIResources {
		subs[r.Name] = true
	}
	byKind = map[string]mapping{}
	for _, r := range list.APIResources {
		if r.Kind == "" || strings.Contains(r.Name, "/") {
			continue
		}
		byKind[r.Kind] = mapping{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced, scale: subs[r.Name+"/scale"]}
	}
	s.mu.Lock()
	s.kinds[gv] = byKind
	s.mu.Unlock()
	return byKind, nil
}

// invalidate forgets discovery, so a CRD added later is found.
func (s *scaleClient) invalidate() {
	s.mu.Lock()
	s.kinds = map[schema.GroupVersion]map[string]mapping{}
	s.mu.Unlock()
}

func (s *scaleClient) resource(m mapping, ns string) *rest.Resource[*autoscalingv1.Scale, *metav1.List] {
	r := rest.For[*autoscalingv1.Scale, *metav1.List](s.client, m.gvr, m.namespaced)
	if m.namespaced {
		r = r.Namespace(ns)
	}
	return r
}

// get reads the scale of the target through each mapping in turn and
// returns the first that answers, or the first error.
func (s *scaleClient) get(ctx context.Context, ns, name string, ms []mapping) (*autoscalingv1.Scale, mapping, error) {
	var first error
	for i, m := range ms {
		sc, err := rest.GetSubresource[*autoscalingv1.Scale](ctx, s.resource(m, ns), name, "scale", metav1.GetOptions{})
		if err == nil {
			return sc, m, nil
		}
		if i == 0 {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("unrecognized resource")
	}
	return nil, mapping{}, first
}

// update writes replicas to the target's scale, reading it again after a
// conflict (up to 5 tries, as client-go's default retry).
func (s *scaleClient) update(ctx context.Context, ns string, sc *autoscalingv1.Scale, m mapping, replicas int32) error {
	var err error
	for range 5 {
		sc.Spec.Replicas = replicas
		if _, err = s.resource(m, ns).UpdateSubresource(ctx, sc, "scale", metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			return err
		}
		latest, gerr := rest.GetSubresource[*autoscalingv1.Scale](ctx, s.resource(m, ns), sc.Name, "scale", metav1.GetOptions{})
		if gerr == nil {
			sc = latest
		}
	}
	return err
}
