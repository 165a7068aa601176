package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Discovery: the server's self-description, read from the unaggregated
// documents (/api, /apis, /api/v1, /apis/<group>/<version>) that every
// Kubernetes-compatible server serves as plain JSON. Callers that map Go
// types or kinds to resources (a REST mapper) build on these two calls.

// ServerGroups returns the API groups the server serves: the core group
// (named "", from /api) first, then every named group of /apis, each with
// its versions and preferred version.
func (c *Client) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	var core metav1.APIVersions
	if err := c.getJSON(ctx, "/api", &core); err != nil {
		return nil, fmt.Errorf("discover core group: %w", err)
	}
	var named metav1.APIGroupList
	if err := c.getJSON(ctx, "/apis", &named); err != nil {
		return nil, fmt.Errorf("discover groups: %w", err)
	}
	out := &metav1.APIGroupList{}
	if len(core.Versions) > 0 {
		g := metav1.APIGroup{Name: ""}
		for _, v := range core.Versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		out.Groups = append(out.Groups, g)
	}
	out.Groups = append(out.Groups, named.Groups...)
	return out, nil
}

// ServerResourcesForGroupVersion returns the resources of gv (GET /api/v1
// or /apis/<group>/<version>), subresources included ("pods/status"). A
// group version the server does not serve is an error for which
// apierrors.IsNotFound is true.
func (c *Client) ServerResourcesForGroupVersion(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	p := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		p = "/api/" + gv.Version
	}
	var list metav1.APIResourceList
	if err := c.getJSON(ctx, p, &list); err != nil {
		return nil, fmt.Errorf("discover resources of %s: %w", gv, err)
	}
	return &list, nil
}

// getJSON GETs path (under the client's Timeout, rate limit and retries)
// and decodes the JSON answer into out.
func (c *Client) getJSON(ctx context.Context, path string, out any) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.do(ctx, &request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: read response: %w", path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("GET %s: decode: %w", path, err)
	}
	return nil
}

// OpenAPIV3 returns the OpenAPI v3 document of gv (GET
// /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>), decoded
// into out.
func (c *Client) OpenAPIV3(ctx context.Context, gv schema.GroupVersion, out any) error {
	p := "/openapi/v3/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		p = "/openapi/v3/api/" + gv.Version
	}
	if err := c.getJSON(ctx, p, out); err != nil {
		return fmt.Errorf("OpenAPI v3 of %s: %w", gv, err)
	}
	return nil
}
