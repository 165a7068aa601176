// Package discovery serves the Kubernetes discovery documents of the
// resources the API server serves, so that kubectl and client-go can list
// groups, versions, resources, verbs, short names and categories.
//
// # Documents
//
// From a []*registry.Resource the Handler builds, once per resource set:
//
//   - /api: APIVersions (the core group's versions; serverAddressByClientCIDRs
//     names 0.0.0.0/0 -> the request's Host, so this one body is encoded per
//     request);
//   - /apis: APIGroupList of the named groups;
//   - /apis/<group>: APIGroup;
//   - /api/v1 and /apis/<group>/<version>: APIResourceList, one entry per
//     resource (with storageVersionHash) and one per subresource
//     ("pods/status", "pods/binding", "deployments/scale" with kind
//     autoscaling/v1 Scale);
//   - the aggregated form of /api and /apis: an APIGroupDiscoveryList of
//     apidiscovery.k8s.io v2 (or v2beta1), which carries every resource in
//     one response.
//
// # Negotiation
//
// client-go and kubectl ask /api and /apis for
// "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
// then v2beta1, then plain application/json, and read the response's
// Content-Type to tell which they got. The Handler answers the first
// clause (by q, then order) it can serve and names the same g/v/as in
// Content-Type; aggregated bodies carry a strong ETag and If-None-Match
// gets 304. An Accept header that allows none of the forms gets 406.
//
// # Invariants
//
//   - Order: the core group comes first in aggregated /api; the built-in
//     named groups follow in kube-apiserver's order (its APIService
//     priorities), then every other group in the order of its first
//     resource in the input (the caller sorts custom groups by name);
//     versions within a group are sorted by Kubernetes version priority,
//     highest (preferred) first; resources are sorted by name.
//   - Aggregated responseKind: built-in resources leave group and version
//     empty where they are the resource's own (as kube-apiserver, which
//     derives them from the legacy entries); custom resources fill them.
//   - A Handler always serves a complete snapshot: Update builds all
//     documents before swapping one atomic pointer; a failed Update leaves
//     the previous snapshot in place.
//   - Bodies are encoded once per snapshot and served as bytes.
//
// # Calling protocol
//
//	h, err := discovery.New(resources)   // validate and build
//	h.Register(mux)                      // GET /api, /api/{v}, /apis, /apis/{g}, /apis/{g}/{v}
//	err = h.Update(newResources)         // e.g. when custom resources change
//
// The Handler reads only the naming fields of each Resource (group,
// version, resource, kind, singular, short names, categories, scope) and
// which subresources it has (Status, Scale, Binding).
package discovery
