package aggregator

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// transportEntry is the HTTPS transport of one APIService's TLS settings;
// a sync keeps it while those settings do not change.
type transportEntry struct {
	key string
	rt  *http.Transport
}

// transportKey names the TLS settings a transport was built for.
func transportKey(spec *apiregv1.APIServiceSpec) string {
	return serverName(spec) + "\x00" + string(spec.CABundle) + "\x00" + map[bool]string{true: "insecure"}[spec.InsecureSkipTLSVerify]
}

// serverName is the name an aggregated server's certificate must carry,
// as kube-aggregator verifies it: <service>.<namespace>.svc.
func serverName(spec *apiregv1.APIServiceSpec) string {
	return spec.Service.Name + "." + spec.Service.Namespace + ".svc"
}

// newTransport builds the transport of an APIService with a service.
// An unreadable caBundle is client-go's error, which kube-aggregator
// answers every proxied request with (500).
func newTransport(spec *apiregv1.APIServiceSpec, cert *tls.Certificate) (*transportEntry, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         serverName(spec),
		InsecureSkipVerify: spec.InsecureSkipTLSVerify, //nolint:gosec // the APIService asks for it
	}
	if len(spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(spec.CABundle) {
			if b, _ := pem.Decode(spec.CABundle); b == nil {
				return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
			}
			return nil, errors.New("unable to load root certificates: no valid certificate authority data seen")
		}
		tc.RootCAs = pool
	}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	rt := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
	}
	return &transportEntry{key: transportKey(spec), rt: rt}, nil
}

// setUserHeaders names user to the aggregated server as kube-aggregator
// does (the requestheader convention): any X-Remote-* header the client
// sent is dropped first.
func setUserHeaders(h http.Header, u registry.UserInfo) {
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "x-remote-") {
			delete(h, k)
		}
	}
	h.Set("X-Remote-User", u.Name)
	if u.UID != "" {
		h.Set("X-Remote-Uid", u.UID)
	}
	for _, g := range u.Groups {
		h.Add("X-Remote-Group", g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add("X-Remote-Extra-"+escapeExtraKey(k), v)
		}
	}
}

// escapeExtraKey percent-encodes what may not appear in a header name, as
// client-go's headerKeyEscape does (kube's requestheader authenticator
// unescapes it).
func escapeExtraKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if legalHeaderByte(c) && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%")
		b.WriteString(strings.ToUpper(hex2(c)))
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// legalHeaderByte reports a token character of RFC 7230.
func legalHeaderByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
