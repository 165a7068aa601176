package openapifacts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Fetch reads /openapi/v3 from a server and every document it names
// ("api/v1", "apis/apps/v1", "apis", "version", ...), keyed by that name,
// and /openapi/v2.
func Fetch(ctx context.Context, client *http.Client, baseURL string) (v3 map[string][]byte, v2 []byte, err error) {
	if v2, err = get(ctx, client, baseURL+"/openapi/v2"); err != nil {
		return nil, nil, err
	}
	index, err := get(ctx, client, baseURL+"/openapi/v3")
	if err != nil {
		return nil, nil, err
	}
	var idx struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(index, &idx); err != nil {
		return nil, nil, fmt.Errorf("openapifacts: /openapi/v3: %w", err)
	}
	out := map[string][]byte{}
	for key, e := range idx.Paths {
		if !builtinDocument(key) {
			continue // a custom resource's group
		}
		b, err := get(ctx, client, baseURL+e.URL)
		if err != nil {
			return nil, nil, err
		}
		out[key] = b
	}
	return out, v2, nil
}

// builtinDocument reports whether an /openapi/v3 index key names a
// document of kube-apiserver's own: not of a group of custom resources
// (built-in groups have no dot or end in .k8s.io).
func builtinDocument(key string) bool {
	parts := strings.Split(key, "/")
	if parts[0] != "apis" || len(parts) < 2 {
		return true
	}
	g := parts[1]
	return !strings.Contains(g, ".") || strings.HasSuffix(g, ".k8s.io")
}

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openapifacts: GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("openapifacts: GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("openapifacts: GET %s: %d", url, resp.StatusCode)
	}
	return b, nil
}
