package disruption

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// scaleReader reads the scale of a pod's controller: a ReplicaSet owned
// by a Deployment counts as the Deployment; anything else is read through
// its scale subresource, its resource found by discovery.
type scaleReader struct {
	client *rest.Client
	mu     sync.Mutex
	// resources caches discovery: kind → resource name and whether it
	// serves scale, per group-version.
	resources map[schema.GroupVersion]map[string]scalable
}

type scalable struct {
	resource   string
	namespaced bool
	scale      bool
}

func newScaleReader(c *rest.Client) *scaleReader {
	return &scaleReader{client: c, resources: map[schema.GroupVersion]map[string]scalable{}}
}

var (
	rsGVR     = appsv1.SchemeGroupVersion.WithResource("replicasets")
	deployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
)

// scaleOf returns the uid of the controller counted for ref and its
// replicas (spec of the scale); found is false when no such controller
// exists (or has another uid).
func (s *scaleReader) scaleOf(ctx context.Context, ns string, ref *metav1.OwnerReference) (types.UID, int32, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return "", 0, false, err
	}
	if gv.Group == appsv1.GroupName && ref.Kind == "ReplicaSet" {
		rs, err := rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](s.client, rsGVR, true).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && rs.UID != ref.UID) {
			return "", 0, false, nil
		}
		if err != nil {
			return "", 0, false, err
		}
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == deployGVK.Kind && owner.APIVersion == deployGVK.GroupVersion().String() {
			return s.scaleOf(ctx, ns, owner)
		}
	}
	return s.subresourceScale(ctx, ns, gv.WithKind(ref.Kind), ref)
}

// subresourceScale reads ref's scale subresource.
func (s *scaleReader) subresourceScale(ctx context.Context, ns string, gvk schema.GroupVersionKind, ref *metav1.OwnerReference) (types.UID, int32, bool, error) {
	res, ok, err := s.resourceFor(ctx, gvk)
	if err != nil || !ok {
		return "", 0, false, err
	}
	gr := schema.GroupResource{Group: gvk.Group, Resource: res.resource}
	if !res.scale {
		return "", 0, false, fmt.Errorf("%s does not implement the scale subresource", gr.String())
	}
	r := rest.For[*autoscalingv1.Scale, *metav1.List](s.client, gr.WithVersion(gvk.Version), res.namespaced)
	if res.namespaced {
		r = r.Namespace(ns)
	}
	sc, err := rest.GetSubresource[*autoscalingv1.Scale](ctx, r, ref.Name, "scale", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("scale of %s %s/%s: %w", gr.String(), ns, ref.Name, err)
	}
	if sc.UID != "" && sc.UID != ref.UID {
		return "", 0, false, nil
	}
	return ref.UID, sc.Spec.Replicas, true, nil
}

// resourceFor finds the resource serving kind gvk (false when none).
func (s *scaleReader) resourceFor(ctx context.Context, gvk schema.GroupVersionKind) (scalable, bool, error) {
	gv := gvk.GroupVersion()
	s.mu.Lock()
	byKind, ok := s.resources[gv]
	s.mu.Unlock()
	if !ok {
		list, err := s.client.ServerResourcesForGroupVersion(ctx, gv)
		if apierrors.IsNotFound(err) {
			return scalable{}, false, nil
		}
		if err != nil {
			return scalable{}, false, fmt.Errorf("discovery of %s: %w", gv, err)
		}
		byKind = map[string]scalable{}
		subs := map[string]bool{}
		for _, r := range list.APIResources {
			subs[r.Name] = true
		}
		for _, r := range list.APIResources {
			if r.Kind == "" || containsSlash(r.Name) {
				continue
			}
			byKind[r.Kind] = scalable{resource: r.Name, namespaced: r.Namespaced, scale: subs[r.Name+"/scale"]}
		}
		s.mu.Lock()
		s.resources[gv] = byKind
		s.mu.Unlock()
	}
	res, ok := byKind[gvk.Kind]
	return res, ok, nil
}

func containsSlash(s string) bool {
	for i := range len(s) {
		if s[i] == '/' {
			return true
		}
	}
	return false
}
