package rest_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDiscovery(t *testing.T) {
	_, c := start(t, nil)
	ctx := context.Background()

	groups, err := c.ServerGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) == 0 || groups.Groups[0].Name != "" || groups.Groups[0].PreferredVersion.GroupVersion != "v1" {
		t.Fatalf("core group must come first with preferred v1: %+v", groups.Groups)
	}
	var apps *metav1.APIGroup
	for i := range groups.Groups {
		if groups.Groups[i].Name == "apps" {
			apps = &groups.Groups[i]
		}
	}
	if apps == nil || apps.PreferredVersion.GroupVersion != "apps/v1" {
		t.Fatalf("apps group missing or wrong: %+v", apps)
	}

	find := func(list *metav1.APIResourceList, name string) *metav1.APIResource {
		for i := range list.APIResources {
			if list.APIResources[i].Name == name {
				return &list.APIResources[i]
			}
		}
		return nil
	}
	core, err := c.ServerResourcesForGroupVersion(ctx, schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := find(core, "configmaps"); r == nil || r.Kind != "ConfigMap" || !r.Namespaced {
		t.Fatalf("configmaps: %+v", r)
	}
	if r := find(core, "nodes"); r == nil || r.Kind != "Node" || r.Namespaced {
		t.Fatalf("nodes: %+v", r)
	}
	appsRes, err := c.ServerResourcesForGroupVersion(ctx, schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := find(appsRes, "deployments"); r == nil || r.Kind != "Deployment" || !r.Namespaced {
		t.Fatalf("deployments: %+v", r)
	}
	if appsRes.GroupVersion != "apps/v1" {
		t.Fatalf("groupVersion = %q", appsRes.GroupVersion)
	}

	_, err = c.ServerResourcesForGroupVersion(ctx, schema.GroupVersion{Group: "example.com", Version: "v1"})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("unknown group version: %v, want NotFound", err)
	}
}
