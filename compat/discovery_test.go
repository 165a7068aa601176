package compat

import (
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// discoveryNorm masks the address kube-apiserver advertises (its own
// --advertise-address and port).
var discoveryNorm = difftest.Normalization{Masks: []string{"body.serverAddressByClientCIDRs[*].serverAddress"}}

// TestDiscovery compares /api, /apis, every group document and every
// group-version document, then aggregated discovery (v2) of /api and /apis.
// Resources setpoint does not serve are left out of the comparison
// (TestServed reports them); everything else counts, order included.
func TestDiscovery(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "discovery", env.sink)
	defer rep.Finish()
	// Two custom groups, created in reverse name order: discovery lists
	// them after the built-in groups, by name.
	createCRDs(t, "b.compat.example.com", "a.compat.example.com")

	compareAnswers(t, rep, "/api", difftest.Request{Path: "/api"}, discoveryNorm, nil)
	compareAnswers(t, rep, "/apis", difftest.Request{Path: "/apis"}, discoveryNorm, func(_ string, a map[string]any) {
		// (groups that are not compared are dropped from both sides)
		groups, _ := difftest.Get(a, "body.groups").([]any)
		var names []any
		kept := groups[:0:0]
		for _, g := range groups {
			name, _ := g.(map[string]any)["name"].(string)
			if groupServed(name) {
				names = append(names, name)
				kept = append(kept, g)
			}
		}
		a["groupOrder"] = names
		a["body"].(map[string]any)["groups"] = difftest.KeyBy(kept, "name")
	})

	gvs := map[string]bool{"/apis/a.compat.example.com": true, "/apis/a.compat.example.com/v1": true}
	for _, r := range env.refRes {
		if served(r.ID()) {
			gvs[gvPath(r.Group, r.Version)] = true
			if r.Group != "" {
				gvs["/apis/"+r.Group] = true
			}
		}
	}
	for _, path := range sortedKeys(gvs) {
		compareAnswers(t, rep, path, difftest.Request{Path: path}, discoveryNorm, shapeResourceList(path))
	}

	for _, path := range []string{"/api", "/apis"} {
		req := difftest.Request{Path: path, Header: map[string]string{"Accept": aggregatedAccept}}
		compareAnswers(t, rep, path+" (aggregated v2)", req, discoveryNorm, shapeAggregated)
	}
}

// comparedCustomGroups are the custom groups the discovery and OpenAPI
// tests create for themselves; the custom groups other tests create come
// and go with the tests that run, so they are not compared.
var comparedCustomGroups = map[string]bool{"a.compat.example.com": true, "b.compat.example.com": true}

// groupServed reports whether a group is compared: one setpoint serves a
// resource of, or a custom group of comparedCustomGroups.
func groupServed(group string) bool {
	if strings.HasSuffix(group, ".example.com") {
		return comparedCustomGroups[group]
	}
	for id := range env.spRes {
		if _, ok := env.refRes[id]; ok && strings.HasPrefix(id, group+"/") {
			return true
		}
	}
	return false
}

// shapeResourceList keys an APIResourceList's resources by name, keeps
// their order as "order", and drops those setpoint does not serve.
func shapeResourceList(path string) func(string, map[string]any) {
	group, version := "", ""
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case parts[0] == "api":
		version = parts[1]
	case len(parts) == 3:
		group, version = parts[1], parts[2]
	default:
		return nil // an APIGroup document
	}
	return func(_ string, a map[string]any) {
		body, ok := a["body"].(map[string]any)
		if !ok {
			return
		}
		list, _ := body["resources"].([]any)
		var order []any
		kept := list[:0:0]
		for _, r := range list {
			name, _ := r.(map[string]any)["name"].(string)
			if served(resourceID(group, version, name)) || !known(resourceID(group, version, name)) {
				order = append(order, name)
				kept = append(kept, r)
			}
		}
		a["order"] = order
		body["resources"] = difftest.KeyBy(kept, "name")
	}
}

// known reports whether the reference serves a resource id.
func known(id string) bool {
	_, ok := env.refRes[id]
	return ok
}

// shapeAggregated keys an APIGroupDiscoveryList by group, version, resource
// and subresource, keeping the orders, and drops what setpoint does not
// serve.
func shapeAggregated(_ string, a map[string]any) {
	body, ok := a["body"].(map[string]any)
	if !ok {
		return
	}
	items, _ := body["items"].([]any)
	groups := map[string]any{}
	var groupOrder []any
	for _, it := range items {
		g := it.(map[string]any)
		name, _ := difftest.Get(g, "metadata.name").(string)
		if name != "" && !groupServed(name) {
			continue
		}
		groupOrder = append(groupOrder, name)
		versions, _ := g["versions"].([]any)
		for _, v := range versions {
			shapeAggregatedVersion(name, v.(map[string]any))
		}
		g["versions"] = difftest.KeyBy(versions, "version")
		groups[name] = g
	}
	body["items"] = groups
	a["groupOrder"] = groupOrder
}

func shapeAggregatedVersion(group string, v map[string]any) {
	version, _ := v["version"].(string)
	list, _ := v["resources"].([]any)
	kept := list[:0:0]
	var order []any
	for _, r := range list {
		rm := r.(map[string]any)
		name, _ := rm["resource"].(string)
		id := resourceID(group, version, name)
		if known(id) && !served(id) {
			continue
		}
		order = append(order, name)
		subs, _ := rm["subresources"].([]any)
		keptSubs := subs[:0:0]
		var subOrder []any
		for _, s := range subs {
			sub, _ := s.(map[string]any)["subresource"].(string)
			if sid := id + "/" + sub; !known(sid) || served(sid) {
				keptSubs = append(keptSubs, s)
				subOrder = append(subOrder, sub)
			}
		}
		if subs != nil {
			rm["subresources"] = difftest.KeyBy(keptSubs, "subresource")
			rm["subresourceOrder"] = subOrder
		}
		kept = append(kept, r)
	}
	v["resourceOrder"] = order
	v["resources"] = difftest.KeyBy(kept, "resource")
}
