package apiserver

import (
	"encoding/json"
	"net"
	"net/http"

	jose "github.com/go-jose/go-jose/v4"
)

// The service-account issuer discovery paths, as kube-apiserver serves
// them (with or without a trailing slash).
const (
	openIDConfigPath = "/.well-known/openid-configuration"
	jwksPath         = "/openid/v1/jwks"
)

func isOIDCPath(p string) bool {
	switch p {
	case openIDConfigPath, openIDConfigPath + "/", jwksPath, jwksPath + "/":
		return true
	}
	return false
}

// openIDConfiguration is the discovery document, its fields in
// kube-apiserver's order.
type openIDConfiguration struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// serveOIDC answers the issuer discovery document and the key set that
// verifies the server's service-account tokens, byte for byte as
// kube-apiserver does: the jwks_uri on the advertised address, the public
// key with use "sig" and its kid, cacheable for an hour. Only GET is
// served; authorization (non-resource get) is the filter chain's.
func (s *Server) serveOIDC(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.resp.writeError(w, r, methodNotAllowed())
		return
	}
	var body []byte
	var err error
	contentType := "application/json"
	if p := r.URL.Path; p == jwksPath || p == jwksPath+"/" {
		contentType = "application/jwk-set+json"
		body, err = json.Marshal(s.tokenIssuer.KeySet())
	} else {
		host, port, _ := net.SplitHostPort(s.Addr())
		body, err = json.Marshal(openIDConfiguration{
			Issuer: s.tokenIssuer.Name(), JWKSURI: s.advertisedURL(host, port) + jwksPath,
			ResponseTypes: []string{"id_token"}, SubjectTypes: []string{"public"}, SigningAlgs: []string{string(jose.RS256)},
		})
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(body)
}
