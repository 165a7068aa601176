// Package webhooktest runs real HTTPS webhook servers on loopback for
// tests: a fresh CA per server, a serving certificate for 127.0.0.1,
// localhost and the extra names given (a Service's <name>.<ns>.svc), and
// the CA bundle a webhook configuration names. Tests only.
package webhooktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a running HTTPS webhook server.
type Server struct {
	// URL is https://127.0.0.1:<port>.
	URL string
	// Port is the listening port.
	Port int32
	// CABundle is the PEM of the CA that signed the serving certificate.
	CABundle []byte
	// Conns counts the TCP connections accepted so far.
	Conns *atomic.Int64

	srv *httptest.Server
}

// Close stops the server now (the test's cleanup also does).
func (s *Server) Close() { s.srv.Close() }

// CA is a certificate authority for test servers.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate.
	PEM []byte
}

// NewCA returns a fresh CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial := big.NewInt(time.Now().UnixNano())
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "webhooktest-ca-" + serial.String()},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Serving issues a serving certificate for 127.0.0.1, ::1, localhost and
// names.
func (ca *CA) Serving(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	return ca.serving(t, nil, names)
}

func (ca *CA) serving(t testing.TB, ips []net.IP, names []string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "webhooktest"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  append([]net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}, ips...),
		DNSNames:     append([]string{"localhost"}, names...),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Start runs h over HTTPS on a loopback port with a certificate of a new
// CA for 127.0.0.1, localhost and names, until the test ends.
func Start(t testing.TB, h http.Handler, names ...string) *Server {
	t.Helper()
	return StartWithCA(t, NewCA(t), h, names...)
}

// StartWithCA is Start with a certificate of ca.
func StartWithCA(t testing.TB, ca *CA, h http.Handler, names ...string) *Server {
	t.Helper()
	return StartOn(t, ca, "127.0.0.1", h, names...)
}

// StartOn is StartWithCA listening on host (an IP, also put in the
// certificate).
func StartOn(t testing.TB, ca *CA, host string, h http.Handler, names ...string) *Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", host, err)
	}
	srv.Listener.Close()
	srv.Listener = l
	cert := ca.serving(t, []net.IP{net.ParseIP(host)}, names)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	conns := &atomic.Int64{}
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return &Server{URL: srv.URL, Port: int32(p), CABundle: ca.PEM, Conns: conns, srv: srv}
}

// HostIP is an IPv4 address of this machine outside the loopback range,
// which an EndpointSlice or Endpoints may name (their validation refuses
// 127.0.0.0/8); the test is skipped on a machine without one.
func HostIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip := n.IP.To4(); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip.String()
			}
		}
	}
	t.Skip("no non-loopback IPv4 address to serve a Service's endpoint on")
	return ""
}
