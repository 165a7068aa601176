package aggregator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/discovery"
)

// acceptAggregated asks for aggregated discovery, as kube-aggregator does.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

// maxDocument bounds a document read from an aggregated server.
const maxDocument = 64 << 20

// versionDiscovery is a backend's entry in aggregated discovery.
type versionDiscovery struct {
	doc  apidiscoveryv2.APIVersionDiscovery
	hash string
}

// Discovery returns the aggregated group-versions for the discovery
// documents: every APIService with a service for a named group the server
// does not serve itself.
func (a *Aggregator) Discovery() []discovery.Aggregated {
	var out []discovery.Aggregated
	for _, b := range a.current.Load().byGV {
		if b.local || b.gv.Group == "" {
			continue
		}
		out = append(out, discovery.Aggregated{Group: b.gv.Group, GroupPriority: b.spec.GroupPriorityMinimum,
			VersionPriority: b.spec.VersionPriority, Discovery: b.discover.doc})
	}
	return out
}

// fetchDiscovery asks an available backend for its version's aggregated
// entry: /apis in the aggregated form, else the legacy
// /apis/<group>/<version>. On failure the last entry is kept, marked
// Stale (without one, an empty Stale entry), as kube-aggregator lists it.
func (a *Aggregator) fetchDiscovery(ctx context.Context, b *backend, old *backend) versionDiscovery {
	entry, err := a.askDiscovery(ctx, b)
	if err != nil {
		a.cfg.Logger.Debug("aggregated discovery", "apiservice", b.name, "err", err)
		entry = apidiscoveryv2.APIVersionDiscovery{Version: b.gv.Version}
		if old != nil && old.discover.doc.Version == b.gv.Version {
			entry = *old.discover.doc.DeepCopy()
		}
		entry.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
	} else {
		entry.Freshness = apidiscoveryv2.DiscoveryFreshnessCurrent
	}
	if entry.Resources == nil {
		entry.Resources = []apidiscoveryv2.APIResourceDiscovery{}
	}
	body, _ := json.Marshal(entry)
	sum := sha256.Sum256(body)
	return versionDiscovery{doc: entry, hash: hex.EncodeToString(sum[:])}
}

func (a *Aggregator) askDiscovery(ctx context.Context, b *backend) (apidiscoveryv2.APIVersionDiscovery, error) {
	if !b.avail || b.rt == nil {
		return apidiscoveryv2.APIVersionDiscovery{}, fmt.Errorf("service unavailable")
	}
	body, ctype, err := a.get(ctx, b, "/apis", acceptAggregated)
	if err != nil {
		return apidiscoveryv2.APIVersionDiscovery{}, err
	}
	if isAggregatedList(ctype) {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &list); err != nil {
			return apidiscoveryv2.APIVersionDiscovery{}, fmt.Errorf("decode /apis: %w", err)
		}
		for _, g := range list.Items {
			if g.Name != b.gv.Group {
				continue
			}
			for _, v := range g.Versions {
				if v.Version == b.gv.Version {
					return v, nil
				}
			}
		}
		return apidiscoveryv2.APIVersionDiscovery{Version: b.gv.Version}, nil
	}
	path := "/apis/" + b.gv.Group + "/" + b.gv.Version
	body, _, err = a.get(ctx, b, path, "application/json")
	if err != nil {
		return apidiscoveryv2.APIVersionDiscovery{}, fmt.Errorf("failed to download legacy discovery for %s: %w", path, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return apidiscoveryv2.APIVersionDiscovery{}, fmt.Errorf("decode %s: %w", path, err)
	}
	return apidiscoveryv2.APIVersionDiscovery{Version: b.gv.Version, Resources: convertLegacy(list.APIResources)}, nil
}

// isAggregatedList reports whether a Content-Type names an
// APIGroupDiscoveryList of apidiscovery.k8s.io v2.
func isAggregatedList(ctype string) bool {
	_, params, err := mime.ParseMediaType(ctype)
	return err == nil && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
}

// get fetches path from the backend as the aggregator (5 s), returning
// the body and its Content-Type; any status but 200 is an error.
func (a *Aggregator) get(ctx context.Context, b *backend, path, accept string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ref := b.spec.Service
	host, err := a.cfg.Resolver.ResolveEndpoint(ctx, ref.Namespace, ref.Name, *ref.Port)
	if err != nil {
		return nil, "", err
	}
	u := &url.URL{Scheme: "https", Host: host, Path: path}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		u.Path, u.RawQuery = path[:i], path[i+1:]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", accept)
	setUserHeaders(req.Header, aggregatorUser)
	resp, err := b.rt.rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// convertLegacy turns a legacy resource list into aggregated entries:
// subresources ("flunders/status") join their resource.
func convertLegacy(in []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	out := []apidiscoveryv2.APIResourceDiscovery{}
	index := map[string]int{}
	var subs []metav1.APIResource
	for _, r := range in {
		if strings.Contains(r.Name, "/") {
			subs = append(subs, r)
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, Scope: scope, SingularResource: r.SingularName, Verbs: r.Verbs,
			ShortNames: r.ShortNames, Categories: r.Categories,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
		})
	}
	for _, s := range subs {
		parent, sub, _ := strings.Cut(s.Name, "/")
		i, ok := index[parent]
		if !ok {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, Verbs: s.Verbs,
			ResponseKind: &metav1.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind},
		})
	}
	return out
}
