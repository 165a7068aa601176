package discovery

import (
	"mime"
	"sort"
	"strconv"
	"strings"
)

// format is the outcome of negotiating a /api or /apis response.
type format int

const (
	formatNone    format = iota // nothing in Accept can be served: 406
	formatLegacy                // application/json, APIVersions or APIGroupList
	formatV2                    // apidiscovery.k8s.io/v2 APIGroupDiscoveryList
	formatV2Beta1               // apidiscovery.k8s.io/v2beta1 APIGroupDiscoveryList
)

// contentType returns the Content-Type of a response in format f.
func (f format) contentType() string {
	switch f {
	case formatV2:
		return aggregatedContentType(versionV2)
	case formatV2Beta1:
		return aggregatedContentType(versionV2Beta1)
	}
	return "application/json"
}

func aggregatedContentType(version string) string {
	return "application/json;g=" + discoveryGroup + ";v=" + version + ";as=" + discoveryKind
}

// negotiate picks the format of a /api or /apis response from an Accept
// header. Clauses are tried by descending q, ties in header order (which is
// how client-go lists its preference: v2, v2beta1, then plain JSON). A
// clause naming apidiscovery.k8s.io parameters matches only an aggregated
// format we serve; a bare JSON or wildcard clause matches the legacy
// format. An empty header means legacy JSON.
func negotiate(accept string) format {
	if strings.TrimSpace(accept) == "" {
		return formatLegacy
	}
	for _, c := range parseAccept(accept) {
		if f := c.match(); f != formatNone {
			return f
		}
	}
	return formatNone
}

type clause struct {
	mediaType string
	params    map[string]string
	q         float64
}

func parseAccept(accept string) []clause {
	var out []clause
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue // a malformed clause cannot match anything
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if parsed, err := strconv.ParseFloat(v, 64); err == nil {
				q = parsed
			}
			delete(params, "q")
		}
		if q > 0 {
			out = append(out, clause{mediaType: mt, params: params, q: q})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	return out
}

func (c clause) match() format {
	switch c.mediaType {
	case "application/json", "application/*", "*/*":
	default:
		return formatNone
	}
	if _, ok := c.params["g"]; !ok {
		if _, ok := c.params["as"]; !ok {
			return formatLegacy
		}
	}
	if c.mediaType != "application/json" || c.params["g"] != discoveryGroup || c.params["as"] != discoveryKind {
		return formatNone
	}
	// profile=nopeer asks to leave out peer servers' resources; this
	// server has no peers, so its answer is the same.
	if p, ok := c.params["profile"]; ok && p != "nopeer" {
		return formatNone
	}
	switch c.params["v"] {
	case versionV2:
		return formatV2
	case versionV2Beta1:
		return formatV2Beta1
	}
	return formatNone
}
