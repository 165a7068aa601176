package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// apiResource is one entry of a group-version's legacy discovery document.
type apiResource struct {
	Group, Version string
	// Name is the resource or "resource/subresource".
	Name         string
	Kind         string
	Namespaced   bool
	Verbs        []string
	SingularName string
	ShortNames   []string
}

// ID is "group/version/name" with "core" for the legacy group.
func (r apiResource) ID() string { return resourceID(r.Group, r.Version, r.Name) }

// Path is the collection path of a top-level resource in namespace ns
// (ignored for cluster-scoped ones).
func (r apiResource) Path(ns string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if r.Namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + r.Name
}

// GroupVersion is "v1" or "group/v1", the apiVersion of its objects.
func (r apiResource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

func (r apiResource) has(verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

func resourceID(group, version, name string) string {
	if group == "" {
		group = "core"
	}
	return group + "/" + version + "/" + name
}

// gvPath is the discovery path of a group-version.
func gvPath(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

type groupVersion struct{ Group, Version string }

// discoverGroupVersions lists the served group-versions of a side, in the
// order of /api and /apis.
func discoverGroupVersions(ctx context.Context, s *difftest.Side) ([]groupVersion, error) {
	var out []groupVersion
	var api struct{ Versions []string }
	if err := getJSON(ctx, s, "/api", &api); err != nil {
		return nil, err
	}
	for _, v := range api.Versions {
		out = append(out, groupVersion{"", v})
	}
	var apis struct {
		Groups []struct {
			Name     string
			Versions []struct{ Version string }
		}
	}
	if err := getJSON(ctx, s, "/apis", &apis); err != nil {
		return nil, err
	}
	for _, g := range apis.Groups {
		for _, v := range g.Versions {
			out = append(out, groupVersion{g.Name, v.Version})
		}
	}
	return out, nil
}

// discoverResources reads every group-version document of a side.
func discoverResources(ctx context.Context, s *difftest.Side) (map[string]apiResource, error) {
	gvs, err := discoverGroupVersions(ctx, s)
	if err != nil {
		return nil, err
	}
	out := map[string]apiResource{}
	for _, gv := range gvs {
		var list struct{ Resources []apiResource }
		if err := getJSON(ctx, s, gvPath(gv.Group, gv.Version), &list); err != nil {
			return nil, err
		}
		for _, r := range list.Resources {
			r.Group, r.Version = gv.Group, gv.Version
			out[r.ID()] = r
		}
	}
	return out, nil
}

func getJSON(ctx context.Context, s *difftest.Side, path string, into any) error {
	resp, err := s.Do(ctx, difftest.Request{Path: path})
	if err != nil {
		return err
	}
	if resp.Code != 200 {
		return fmt.Errorf("%s: GET %s: %d %s", s.Name, path, resp.Code, resp.Body)
	}
	if err := json.Unmarshal(resp.Body, into); err != nil {
		return fmt.Errorf("%s: GET %s: %w", s.Name, path, err)
	}
	return nil
}

// refResources returns the reference's top-level resources (no
// subresources) in id order, optionally only those with a verb.
func refResources(verb string) []apiResource {
	var out []apiResource
	for _, r := range env.refRes {
		if strings.Contains(r.Name, "/") || (verb != "" && !r.has(verb)) {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
