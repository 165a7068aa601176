package refcluster_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// TestSideBySide starts setpoint and the reference in one test and asks
// both for /version, each through its admin kubeconfig: the pattern of a
// differential test.
func TestSideBySide(t *testing.T) {
	sp := testenv.StartT(t, testenv.Options{})
	ref := refcluster.StartT(t, refcluster.Options{})

	for _, side := range []struct {
		name, kubeconfig, wantPrefix string
	}{
		{"setpoint", sp.Kubeconfig, "v1.37."},
		{"reference", ref.Kubeconfig(), refcluster.Version},
	} {
		client, host := clientFor(t, side.kubeconfig)
		info := getVersion(t, client, host)
		t.Logf("%s: %s", side.name, info.GitVersion)
		if info.Major != "1" || info.Minor != "37" || !strings.HasPrefix(info.GitVersion, side.wantPrefix) {
			t.Errorf("%s /version = %+v, want 1.37 (%s…)", side.name, info, side.wantPrefix)
		}
	}
}

// clientFor returns an HTTP client with the credentials of a kubeconfig
// (CA, client certificate, bearer token) and the server's base URL.
func clientFor(t *testing.T, kubeconfig string) (*http.Client, string) {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.TLS.CAData) > 0 {
		tlsCfg.RootCAs = x509.NewCertPool()
		tlsCfg.RootCAs.AppendCertsFromPEM(cfg.TLS.CAData)
	}
	if len(cfg.TLS.CertData) > 0 {
		cert, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
		if err != nil {
			t.Fatal(err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsCfg
	t.Cleanup(transport.CloseIdleConnections)
	var rt http.RoundTripper = transport
	if cfg.BearerToken != "" {
		rt = tokenTransport{token: cfg.BearerToken, next: transport}
	}
	return &http.Client{Transport: rt}, cfg.Host
}

type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (tt tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tt.token)
	return tt.next.RoundTrip(r)
}

// clientTrusting returns a client that trusts the CA certificate ca.
func clientTrusting(t *testing.T, ca []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no certificate in the CA file")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport}
}
