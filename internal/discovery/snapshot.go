package discovery

import (
	"fmt"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// snapshot holds every discovery document of one resource set, encoded.
// It is immutable once built; Handler swaps whole snapshots.
type snapshot struct {
	// coreVersions are the versions of the core group, served by /api
	// (the body also names the request's host, so it is encoded per
	// request).
	coreVersions []string
	// groupList is /apis (APIGroupList, named groups only).
	groupList document
	// groups maps a group name to its /apis/<group> APIGroup.
	groups map[string]document
	// resourceLists maps "v1" and "<group>/<version>" to the
	// APIResourceList of /api/v1 and /apis/<group>/<version>.
	resourceLists map[string]document
	// aggregated maps {legacy root?, version} to the APIGroupDiscoveryList
	// of /api (core group only) and /apis (named groups).
	aggregated map[aggregatedKey]document
}

type aggregatedKey struct {
	legacy  bool   // true: /api, false: /apis
	version string // versionV2 or versionV2Beta1
}

// build encodes all documents of a resource set.
func build(resources []*registry.Resource, agg []Aggregated) (*snapshot, error) {
	arranged, err := arrange(resources)
	if err != nil {
		return nil, err
	}
	arranged.addAggregated(agg)
	s := &snapshot{
		groups:        map[string]document{},
		resourceLists: map[string]document{},
		aggregated:    map[aggregatedKey]document{},
	}
	groupList := metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{},
	}
	var coreAgg, namedAgg []apidiscoveryv2.APIGroupDiscovery
	for _, g := range arranged.groups {
		for _, v := range g.versions {
			name := g.groupVersion(v.version).String()
			if s.resourceLists[name], err = encode(resourceList(name, v.resources)); err != nil {
				return nil, err
			}
		}
		if g.name == "" {
			for _, v := range g.versions {
				s.coreVersions = append(s.coreVersions, v.version)
			}
			coreAgg = append(coreAgg, g.aggregatedGroup())
			continue
		}
		apiGroup := g.apiGroup()
		groupList.Groups = append(groupList.Groups, apiGroup)
		apiGroup.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		if s.groups[g.name], err = encode(apiGroup); err != nil {
			return nil, err
		}
		namedAgg = append(namedAgg, g.aggregatedGroup())
	}
	if s.groupList, err = encode(groupList); err != nil {
		return nil, err
	}
	for _, version := range []string{versionV2, versionV2Beta1} {
		for legacy, items := range map[bool][]apidiscoveryv2.APIGroupDiscovery{true: coreAgg, false: namedAgg} {
			if s.aggregated[aggregatedKey{legacy, version}], err = encode(aggregatedList(version, items)); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// aggregatedList wraps groups in an APIGroupDiscoveryList of the given
// apidiscovery.k8s.io version. v2beta1 and v2 are identical on the wire
// apart from apiVersion, so one Go type encodes both.
func aggregatedList(version string, items []apidiscoveryv2.APIGroupDiscovery) *apidiscoveryv2.APIGroupDiscoveryList {
	if items == nil {
		items = []apidiscoveryv2.APIGroupDiscovery{}
	}
	return &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: discoveryKind, APIVersion: discoveryGroup + "/" + version},
		Items:    items,
	}
}

// apiVersions returns the /api body for a request that reached the server
// as host.
func (s *snapshot) apiVersions(host string) (document, error) {
	versions := s.coreVersions
	if versions == nil {
		versions = []string{}
	}
	doc, err := encode(metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: versions,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: host},
		},
	})
	if err != nil {
		return document{}, fmt.Errorf("discovery: /api: %w", err)
	}
	return doc, nil
}
