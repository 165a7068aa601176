package rest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"k8s.io/utils/clock"
)

// DefaultMaxRetries is used when Config.MaxRetries is zero.
const DefaultMaxRetries = 10

// DefaultQPS and DefaultBurst are the token bucket of a Config whose QPS
// and Burst are zero: client-go's defaults.
const (
	DefaultQPS   float32 = 5
	DefaultBurst         = 10
)

// Config describes how to reach and authenticate to an API server. The zero
// value of every optional field selects the documented default.
type Config struct {
	// Host is the server's base URL, e.g. https://10.0.0.1:6443. It may carry
	// a path prefix, which is kept in front of /api and /apis.
	Host string
	// Hosts are further base URLs of the same cluster: other API servers
	// sharing Host's CA and credentials (replicas on one etcd). The client
	// sends to one server at a time, starting with Host; when a request
	// fails at the transport level (connection refused, reset, TLS or dial
	// failure: no HTTP answer), later requests go to the next server, round
	// robin, and the failed request itself is retried there if the retry
	// rules allow it (always when the connection was refused, otherwise
	// only for idempotent verbs). A kubeconfig cluster's
	// FailoverExtension fills it.
	Hosts []string
	// BearerToken is sent as "Authorization: Bearer <token>".
	// BearerTokenFile, when set, is the token's file: the client reads it
	// (at New when BearerToken is empty), then again every
	// TokenFileRereadPeriod and after a 401, as client-go does, so a
	// rotated token is picked up.
	BearerToken     string
	BearerTokenFile string
	// ExecProvider, when set, runs a credential plugin for the token or
	// client certificate instead (kubeconfig users[].user.exec).
	ExecProvider *ExecConfig
	// TLS configures server verification and client certificates.
	TLS TLSConfig
	// Namespace is the default namespace of the kubeconfig context, or "".
	// The client does not apply it by itself; callers pass it to Namespace.
	Namespace string
	// QPS and Burst configure the client-side token bucket, as client-go's
	// rest.Config: QPS 0 means DefaultQPS (5) and Burst 0 DefaultBurst
	// (10); a negative QPS disables limiting. Burst < 1 is treated as 1.
	QPS   float32
	Burst int
	// Metrics, when set, records every request in client-go's
	// rest_client_requests_total and rest_client_request_duration_seconds
	// (see NewMetrics); nil records nothing.
	Metrics *Metrics
	// Timeout bounds each non-watch request, including its retries. Zero
	// means no limit beyond the caller's context. Watches are never bounded
	// by it (use ListOptions.TimeoutSeconds or the context).
	Timeout time.Duration
	// UserAgent defaults to "setpoint-rest (GOOS/GOARCH)".
	UserAgent string
	// MaxRetries bounds retries of one request: 0 means DefaultMaxRetries,
	// a negative value disables retries.
	MaxRetries int
	// Clock times backoff and rate limiting; nil means the real clock.
	Clock clock.Clock
	// ContentType is the media type of request bodies, as client-go's
	// rest.Config: "" or "application/json" (the default), or
	// "application/vnd.kubernetes.protobuf", which Kubernetes' own
	// components use. With protobuf, objects of built-in kinds are sent
	// and received in protobuf (lists and watch streams too); objects
	// without a protobuf form (unstructured objects, custom resources'
	// types) stay JSON. Left unset, Resource.PreferProtobuf (informers)
	// still uses protobuf; set to JSON, it does not.
	ContentType string
	// AcceptContentTypes is the Accept header of requests for built-in
	// kinds when ContentType is protobuf; "" means
	// "application/vnd.kubernetes.protobuf, application/json". Responses
	// are decoded by their Content-Type, so a server that answers JSON is
	// understood too. Requests for objects without a protobuf form always
	// accept only JSON.
	AcceptContentTypes string
	// DisableCompression leaves gzip out of the requests' Accept-Encoding,
	// as client-go's: responses a server would compress (kube-apiserver and
	// setpoint compress large lists and streaming lists) come uncompressed.
	// For a client on the server's own host, where compression costs CPU on
	// both ends and saves nothing. Only the transport built from TLS honours
	// it; a given Transport decides for itself. A kubeconfig cluster's
	// disable-compression sets it.
	DisableCompression bool
	// Transport, when set, replaces the transport built from TLS.
	Transport http.RoundTripper
	// WrapTransport, when set, wraps the transport (built or given) for
	// every request, as client-go's: e.g. to set credentials per request
	// (a token that is renewed). It sees each request as built, with the
	// Authorization header of BearerToken when that is set.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// TLSConfig holds server trust and client certificate material. Data
// fields take precedence over the matching file fields.
type TLSConfig struct {
	// Insecure skips server certificate verification.
	Insecure bool
	// ServerName overrides the name checked in the server certificate.
	ServerName string
	// CAData / CAFile: PEM bundle of trusted roots; empty means system roots.
	CAData []byte
	CAFile string
	// CertData/CertFile and KeyData/KeyFile: PEM client certificate and key;
	// both or neither must be present.
	CertData []byte
	CertFile string
	KeyData  []byte
	KeyFile  string
}

// rateLimit returns the effective QPS and burst: the defaults for zero
// values; a QPS <= 0 (negative in Config) means no limit.
func (c *Config) rateLimit() (float32, int) {
	qps, burst := c.QPS, c.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst == 0 {
		burst = DefaultBurst
	}
	return qps, burst
}

func (c *Config) maxRetries() int {
	switch {
	case c.MaxRetries < 0:
		return 0
	case c.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return c.MaxRetries
}

func (c *Config) userAgent() string {
	if c.UserAgent != "" {
		return c.UserAgent
	}
	return fmt.Sprintf("setpoint-rest (%s/%s)", runtime.GOOS, runtime.GOARCH)
}

func (c *Config) bearerToken() (string, error) {
	if c.BearerToken != "" || c.BearerTokenFile == "" {
		return c.BearerToken, nil
	}
	b, err := os.ReadFile(c.BearerTokenFile)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	return string(trimSpace(b)), nil
}

// tlsConfig builds the crypto/tls configuration from TLSConfig.
func (t *TLSConfig) tlsConfig() (*tls.Config, error) {
	out := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.Insecure, ServerName: t.ServerName}
	ca, err := dataOrFile(t.CAData, t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("certificate authority: %w", err)
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("certificate authority: no PEM certificates found")
		}
		out.RootCAs = pool
	}
	cert, err := dataOrFile(t.CertData, t.CertFile)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	key, err := dataOrFile(t.KeyData, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("client key: %w", err)
	}
	if len(cert) > 0 || len(key) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("client certificate and key: %w", err)
		}
		out.Certificates = []tls.Certificate{pair}
	}
	return out, nil
}

// newTransport builds an HTTP/2-capable transport with settings like
// client-go's: pooled connections, dial and TLS handshake timeouts, and
// HTTP/2 health pings so a dead connection is noticed on idle watches.
func newTransport(t *TLSConfig, disableCompression bool) (*http.Transport, error) {
	tc, err := t.tlsConfig()
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		DisableCompression:  disableCompression,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		HTTP2:               &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}, nil
}

func dataOrFile(data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return b, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
