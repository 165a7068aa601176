package difftest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/setpoint-dev/setpoint/rest"
)

// SideFromKubeconfig builds a Side from a kubeconfig's current context:
// its server, CA, client certificate and bearer token.
func SideFromKubeconfig(name, kubeconfig string) (*Side, error) {
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.TLS.CAData) > 0 {
		tlsCfg.RootCAs = x509.NewCertPool()
		tlsCfg.RootCAs.AppendCertsFromPEM(cfg.TLS.CAData)
	}
	if len(cfg.TLS.CertData) > 0 {
		cert, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
		if err != nil {
			return nil, fmt.Errorf("%s: client certificate: %w", name, err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsCfg
	transport.MaxIdleConnsPerHost = 16
	var rt http.RoundTripper = transport
	if cfg.BearerToken != "" {
		rt = bearer{token: cfg.BearerToken, next: transport}
	}
	return &Side{Name: name, URL: cfg.Host, Client: &http.Client{Transport: rt}, rootCAs: tlsCfg.RootCAs}, nil
}

// WithToken is a Side on the same server that authenticates with a bearer
// token only (no client certificate, which servers would prefer): another
// identity, such as a ServiceAccount's.
func (s *Side) WithToken(user, token string) *Side {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: s.rootCAs}
	return &Side{Name: s.Name, URL: s.URL, User: user, rootCAs: s.rootCAs,
		Client: &http.Client{Transport: bearer{token: token, next: transport}}}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
