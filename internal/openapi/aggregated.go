package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Aggregated is what one aggregated API server publishes for its
// group-version (an APIService with a service), fetched by package
// aggregator.
type Aggregated struct {
	// Group is the APIService's group: of V2, the paths under
	// /apis/<Group>/ are merged.
	Group string
	// V2 is its Swagger 2.0 JSON document; nil for none.
	V2 []byte
	// V3 maps a group-version path ("apis/wardle.example.com/v1alpha1")
	// to its OpenAPI v3 JSON document, listed in /openapi/v3 and served
	// under /openapi/v3/<path>.
	V3 map[string][]byte
}

// SetAggregated replaces the aggregated servers' documents merged into
// the served ones. On error the previous documents stay in place.
func (s *Service) SetAggregated(agg []Aggregated) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.current.Load()
	v3, err := withAggregatedV3(cur.baseV3, agg)
	if err != nil {
		return err
	}
	s.agg = agg
	s.current.Store(&snapshot{built: s.opts.Now().UTC().Truncate(time.Second), plan: cur.plan, baseV3: cur.baseV3, v3: v3, agg: agg})
	return nil
}

// withAggregatedV3 returns base with the aggregated group-version
// documents added to its documents and its /openapi/v3 index; base itself
// is not modified. A group-version the server documents itself keeps its
// own document.
func withAggregatedV3(base *v3Set, agg []Aggregated) (*v3Set, error) {
	if len(agg) == 0 {
		return base, nil
	}
	if err := base.ready(); err != nil {
		return nil, err
	}
	docs := maps.Clone(base.docs)
	var disco discoveryV3
	if err := json.Unmarshal(base.discovery.body, &disco); err != nil {
		return nil, fmt.Errorf("openapi: decode the v3 index: %w", err)
	}
	for _, a := range agg {
		for path, body := range a.V3 {
			if _, own := base.docs[path]; own {
				continue
			}
			doc := newDocument(body)
			docs[path] = doc
			disco.Paths[path] = discoveryV3Entry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.hash}
		}
	}
	discovery, err := encodeJSON(disco)
	if err != nil {
		return nil, err
	}
	return encodedV3Set(base.schemas, docs, base.byKey, discovery), nil
}

// addAggregatedV2 adds to the server's own Swagger 2.0 paths and
// definitions the paths under /apis/<group>/ of each aggregated document
// and the definitions the server does not have (its own win a name both
// use). A document that does not parse as Swagger 2.0 adds nothing: it
// would spoil the protobuf form of the whole.
func addAggregatedV2(paths *spec.Paths, defs map[string]*spec.Schema, agg []Aggregated) {
	for _, a := range agg {
		if a.V2 == nil {
			continue
		}
		if _, err := openapiv2.ParseDocument(a.V2); err != nil {
			continue
		}
		var theirs spec.Swagger
		if err := json.Unmarshal(a.V2, &theirs); err != nil || theirs.Paths == nil {
			continue
		}
		for p, item := range theirs.Paths.Paths {
			if _, ok := paths.Paths[p]; !ok && strings.HasPrefix(p, "/apis/"+a.Group+"/") {
				paths.Paths[p] = item
			}
		}
		for name, d := range theirs.Definitions {
			if _, ok := defs[name]; !ok {
				defs[name] = &d
			}
		}
	}
}

func hasV2(agg []Aggregated) bool {
	for _, a := range agg {
		if a.V2 != nil {
			return true
		}
	}
	return false
}
