package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Media types and group-version-kinds of the aggregated discovery formats.
const (
	discoveryGroup = "apidiscovery.k8s.io"
	discoveryKind  = "APIGroupDiscoveryList"
	versionV2      = "v2"
	versionV2Beta1 = "v2beta1"
)

// subresource is one subresource entry of a resource's discovery.
type subresource struct {
	name  string
	kind  schema.GroupVersionKind
	verbs []string
}

// subresources lists what r serves besides the main resource, sorted by
// name as Kubernetes sorts them; a custom resource lists status before
// scale, as kube-apiserver's CRD discovery does.
func subresources(r *registry.Resource) []subresource {
	var out []subresource
	for _, sr := range r.Subresources {
		out = append(out, subresource{sr.Name, sr.Kind, sr.Verbs})
	}
	if r.Scale != nil {
		out = append(out, subresource{"scale",
			schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
			[]string{"get", "patch", "update"}})
	}
	if r.Status != nil {
		out = append(out, subresource{"status", r.GVK(), []string{"get", "patch", "update"}})
	}
	if r.Unstructured {
		sort.Slice(out, func(i, j int) bool { return out[i].name > out[j].name })
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// customVerbs is the order in which kube-apiserver lists a custom
// resource's verbs.
var customVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// verbs are r's verbs in the order kube-apiserver lists them: sorted for
// built-in resources, customVerbs' order for custom resources.
func verbs(r *registry.Resource) []string {
	v := r.Verbs()
	if !r.Unstructured {
		return v
	}
	out := make([]string, 0, len(v))
	for _, cv := range customVerbs {
		if r.Serves(cv) {
			out = append(out, cv)
		}
	}
	return out
}

// storageHash is the storageVersionHash of a served resource: of its
// storage version, none for resources that are not stored.
func storageHash(r *registry.Resource) string {
	gvk := r.StorageGVK()
	if gvk.Empty() {
		return ""
	}
	return StorageVersionHash(gvk)
}

// StorageVersionHash returns the opaque hash Kubernetes publishes as a
// resource's storageVersionHash: the first 8 bytes of the SHA-256 of
// "group/version/kind" of the stored version, base64-encoded.
func StorageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// groupVersions is the resource list grouped by group, then version.
// Invariant: groups[0] is the core group ("") when any core resource
// exists; other groups keep the order of their first resource in the
// input; versions are sorted by Kubernetes version priority, highest
// (preferred) first; resources within a version are sorted by name.
type groupVersions struct {
	groups []*group
}

type group struct {
	name     string
	versions []*gv
	// aggregated are the group's versions served by aggregated API
	// servers, highest version priority first; priority is the highest
	// group priority of their APIServices (customGroupPriority for a group
	// of custom resources only).
	aggregated []Aggregated
	priority   int32
}

type gv struct {
	version   string
	resources []*registry.Resource
}

func (g *group) groupVersion(v string) schema.GroupVersion {
	return schema.GroupVersion{Group: g.name, Version: v}
}

// arrange validates the resources and groups them.
func arrange(resources []*registry.Resource) (*groupVersions, error) {
	seen := map[schema.GroupVersionResource]bool{}
	byName := map[string]*group{}
	out := &groupVersions{}
	for i, r := range resources {
		if r == nil || r.Version == "" || r.Resource == "" || r.Kind == "" {
			return nil, fmt.Errorf("discovery: resource %d: version, resource and kind are required", i)
		}
		if seen[r.GVR()] {
			return nil, fmt.Errorf("discovery: resource %s listed twice", r.GVR())
		}
		seen[r.GVR()] = true
		g := byName[r.Group]
		if g == nil {
			g = &group{name: r.Group, priority: customGroupPriority}
			byName[r.Group] = g
			out.groups = append(out.groups, g)
		}
		g.add(r)
	}
	sort.SliceStable(out.groups, func(i, j int) bool {
		return groupRank(out.groups[i].name) < groupRank(out.groups[j].name)
	})
	for _, g := range out.groups {
		sort.SliceStable(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i].version, g.versions[j].version) > 0
		})
		for _, v := range g.versions {
			sort.Slice(v.resources, func(i, j int) bool { return v.resources[i].Resource < v.resources[j].Resource })
		}
	}
	return out, nil
}

// builtinGroupOrder is the order in which kube-apiserver v1.37 lists its
// built-in API groups after the core group (the priorities of their
// APIServices, highest first).
var builtinGroupOrder = []string{
	"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
	"networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
	"admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
	"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io",
}

// groupRank orders groups as kube-apiserver does: the core group, then the
// built-in groups by priority, then every other group (custom resources'
// groups, which have the lowest priority) in input order.
func groupRank(name string) int {
	if name == "" {
		return 0
	}
	for i, g := range builtinGroupOrder {
		if g == name {
			return i + 1
		}
	}
	return len(builtinGroupOrder) + 1
}

func (g *group) add(r *registry.Resource) {
	for _, v := range g.versions {
		if v.version == r.Version {
			v.resources = append(v.resources, r)
			return
		}
	}
	g.versions = append(g.versions, &gv{version: r.Version, resources: []*registry.Resource{r}})
}

// apiGroup returns the legacy APIGroup of a named group.
func (g *group) apiGroup() metav1.APIGroup {
	out := metav1.APIGroup{Name: g.name}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: g.groupVersion(v.version).String(), Version: v.version,
		})
	}
	out.Versions = append(out.Versions, g.aggregatedVersions()...)
	out.PreferredVersion = out.Versions[0]
	return out
}

// resourceList returns the legacy APIResourceList of one group-version.
func resourceList(gvName string, resources []*registry.Resource) *metav1.APIResourceList {
	out := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gvName,
		APIResources: []metav1.APIResource{},
	}
	if gvName == "v1" {
		out.APIVersion = "" // kube-apiserver leaves it out of /api/v1
	}
	for _, r := range resources {
		out.APIResources = append(out.APIResources, metav1.APIResource{
			Name: r.Resource, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: verbs(r), ShortNames: r.ShortNames, Categories: r.Categories,
			StorageVersionHash: storageHash(r),
		})
		for _, s := range subresources(r) {
			entry := metav1.APIResource{
				Name: r.Resource + "/" + s.name, Namespaced: r.Namespaced,
				Kind: s.kind.Kind, Verbs: s.verbs,
			}
			if s.kind.GroupVersion() != r.GroupVersion() {
				entry.Group, entry.Version = s.kind.Group, s.kind.Version
			}
			out.APIResources = append(out.APIResources, entry)
		}
	}
	return out
}

// aggregatedGroup returns the apidiscovery.k8s.io/v2 entry of a group.
func (g *group) aggregatedGroup() apidiscoveryv2.APIGroupDiscovery {
	out := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
	for _, v := range g.versions {
		av := apidiscoveryv2.APIVersionDiscovery{
			Version: v.version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			Resources: []apidiscoveryv2.APIResourceDiscovery{},
		}
		for _, r := range v.resources {
			av.Resources = append(av.Resources, aggregatedResource(r))
		}
		out.Versions = append(out.Versions, av)
	}
	for _, a := range g.aggregated {
		out.Versions = append(out.Versions, a.Discovery)
	}
	return out
}

func aggregatedResource(r *registry.Resource) apidiscoveryv2.APIResourceDiscovery {
	scope := apidiscoveryv2.ScopeCluster
	if r.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	out := apidiscoveryv2.APIResourceDiscovery{
		Resource: r.Resource, ResponseKind: responseKind(r, r.GVK()), Scope: scope,
		SingularResource: r.Singular, Verbs: verbs(r),
		ShortNames: r.ShortNames, Categories: r.Categories,
	}
	for _, s := range subresources(r) {
		out.Subresources = append(out.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: s.name, ResponseKind: responseKind(r, s.kind), Verbs: s.verbs,
		})
	}
	return out
}

// responseKind is the responseKind of a resource or subresource answering
// gvk. kube-apiserver derives it for built-in resources from the legacy
// APIResource entry, whose group and version are empty unless they differ
// from the resource's own (autoscaling/v1 Scale); custom resources carry
// their group and version always.
func responseKind(r *registry.Resource, gvk schema.GroupVersionKind) *metav1.GroupVersionKind {
	if !r.Unstructured && gvk.GroupVersion() == r.GroupVersion() {
		return &metav1.GroupVersionKind{Kind: gvk.Kind}
	}
	return gvkPtr(gvk)
}

func gvkPtr(gvk schema.GroupVersionKind) *metav1.GroupVersionKind {
	return &metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

// document is one pre-encoded response body with its strong ETag.
type document struct {
	body []byte
	// etag is the quoted hex SHA-256 of body.
	etag string
}

func encode(v any) (document, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return document{}, fmt.Errorf("discovery: encode %T: %w", v, err)
	}
	sum := sha256.Sum256(b)
	return document{body: b, etag: `"` + hex.EncodeToString(sum[:]) + `"`}, nil
}
