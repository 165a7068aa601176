package aggregator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/setpoint-dev/setpoint/internal/openapi"
)

// openAPIDocs are what a backend publishes for its group-version.
type openAPIDocs struct {
	v2   []byte
	v3   map[string][]byte // by group-version path
	hash string
}

// OpenAPI returns the aggregated servers' documents to merge into the
// server's own (every APIService proxied, with what its server last
// answered).
func (a *Aggregator) OpenAPI() []openapi.Aggregated {
	var out []openapi.Aggregated
	for _, b := range a.current.Load().byGV {
		if b.local || (b.openapi.v2 == nil && len(b.openapi.v3) == 0) {
			continue
		}
		out = append(out, openapi.Aggregated{Group: b.gv.Group, V2: b.openapi.v2, V3: b.openapi.v3})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// fetchOpenAPI asks an available backend for /openapi/v2 and for the
// OpenAPI v3 document of its group-version; what cannot be fetched keeps
// the last answer (none when the backend is unavailable).
func (a *Aggregator) fetchOpenAPI(ctx context.Context, b *backend, old *backend) openAPIDocs {
	if !b.avail || b.rt == nil {
		return openAPIDocs{}
	}
	var out openAPIDocs
	if old != nil {
		out = old.openapi
	}
	if v2, _, err := a.get(ctx, b, "/openapi/v2", "application/json"); err == nil && json.Valid(v2) {
		out.v2 = v2
	} else if err != nil {
		a.cfg.Logger.Debug("aggregated OpenAPI v2", "apiservice", b.name, "err", err)
	}
	if v3, err := a.fetchV3(ctx, b); err == nil {
		out.v3 = v3
	} else {
		a.cfg.Logger.Debug("aggregated OpenAPI v3", "apiservice", b.name, "err", err)
	}
	h := sha256.New()
	h.Write(out.v2)
	keys := make([]string, 0, len(out.v3))
	for k := range out.v3 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write(out.v3[k])
	}
	out.hash = hex.EncodeToString(h.Sum(nil))
	return out
}

// fetchV3 reads the backend's /openapi/v3 index and the document of the
// APIService's group-version it names.
func (a *Aggregator) fetchV3(ctx context.Context, b *backend) (map[string][]byte, error) {
	body, _, err := a.get(ctx, b, "/openapi/v3", "application/json")
	if err != nil {
		return nil, err
	}
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &index); err != nil {
		return nil, err
	}
	path := "apis/" + b.gv.Group + "/" + b.gv.Version
	e, ok := index.Paths[path]
	if !ok {
		return map[string][]byte{}, nil
	}
	doc, _, err := a.get(ctx, b, e.ServerRelativeURL, "application/json")
	if err != nil {
		return nil, err
	}
	if !json.Valid(doc) {
		return map[string][]byte{}, nil
	}
	return map[string][]byte{path: doc}, nil
}
