package discovery

import (
	"sort"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

// Aggregated is one group-version an aggregated API server serves (an
// APIService with a service): listed in /apis, /apis/<group> and the
// aggregated documents; its /apis/<group>/<version> is the aggregated
// server's own (proxied), so no document of it is built here.
type Aggregated struct {
	Group string
	// GroupPriority and VersionPriority are the APIService's
	// groupPriorityMinimum and versionPriority.
	GroupPriority, VersionPriority int32
	// Discovery is the version's aggregated entry (Version set; resources
	// as the aggregated server describes them; freshness Stale when it
	// could not be asked).
	Discovery apidiscoveryv2.APIVersionDiscovery
}

// customGroupPriority is the group priority kube-apiserver gives the
// APIServices of custom resources' groups.
const customGroupPriority = 1000

// SetAggregated replaces the aggregated group-versions listed with the
// served resources. On error the previous documents stay in place.
func (h *Handler) SetAggregated(agg []Aggregated) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, err := build(h.resources, agg)
	if err != nil {
		return err
	}
	h.aggregated = agg
	h.current.Store(s)
	return nil
}

// addAggregated merges agg into the arranged groups: versions join their
// group (a new group when none serves it), ordered by version priority,
// highest first, then by Kubernetes version; groups beyond the built-in
// ones are ordered by group priority, highest first, then by name, custom
// resources' groups counting as customGroupPriority.
func (out *groupVersions) addAggregated(agg []Aggregated) {
	if len(agg) == 0 {
		return
	}
	byName := map[string]*group{}
	for _, g := range out.groups {
		byName[g.name] = g
	}
	for _, a := range agg {
		g := byName[a.Group]
		if g == nil {
			g = &group{name: a.Group, priority: a.GroupPriority}
			byName[a.Group] = g
			out.groups = append(out.groups, g)
		} else if a.GroupPriority > g.priority {
			g.priority = a.GroupPriority
		}
		g.aggregated = append(g.aggregated, a)
	}
	for _, g := range out.groups {
		sort.SliceStable(g.aggregated, func(i, j int) bool {
			a, b := g.aggregated[i], g.aggregated[j]
			if a.VersionPriority != b.VersionPriority {
				return a.VersionPriority > b.VersionPriority
			}
			return version.CompareKubeAwareVersionStrings(a.Discovery.Version, b.Discovery.Version) > 0
		})
	}
	sort.SliceStable(out.groups, func(i, j int) bool {
		a, b := out.groups[i], out.groups[j]
		ra, rb := groupRank(a.name), groupRank(b.name)
		if ra != rb || ra <= len(builtinGroupOrder) {
			return ra < rb
		}
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		return a.name < b.name
	})
}

// aggregatedVersions lists the group's aggregated versions for /apis.
func (g *group) aggregatedVersions() []metav1.GroupVersionForDiscovery {
	var out []metav1.GroupVersionForDiscovery
	for _, a := range g.aggregated {
		v := a.Discovery.Version
		out = append(out, metav1.GroupVersionForDiscovery{GroupVersion: g.groupVersion(v).String(), Version: v})
	}
	return out
}
