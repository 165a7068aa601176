package clientbuilder

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/rest"
)

// Defaults of Options, kube-controller-manager's.
const (
	DefaultNamespace     = "kube-system"
	DefaultExpiration    = time.Hour
	DefaultLeewayPercent = 20
	// minLifetime is the least lifetime a token is assumed to have.
	minLifetime = 10 * time.Minute
)

// Options configure a Builder; zero values select the defaults.
type Options struct {
	// Namespace holds the ServiceAccounts (default kube-system).
	Namespace string
	// Expiration is the lifetime asked of each token (default 1 hour).
	Expiration time.Duration
	// LeewayPercent of a token's lifetime is left when it is renewed
	// (default 20).
	LeewayPercent int
	// Clock tells the tokens' ages; default the real clock.
	Clock clock.PassiveClock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Builder hands out per-ServiceAccount client configurations derived from
// a root configuration.
type Builder struct {
	root   *rest.Config
	opts   Options
	client *rest.Client

	mu      sync.Mutex
	sources map[string]*tokenSource
}

// New builds a Builder whose root configuration (the controller manager's
// own identity) creates the ServiceAccounts and requests their tokens.
func New(root *rest.Config, opts Options) (*Builder, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Expiration <= 0 {
		opts.Expiration = DefaultExpiration
	}
	if opts.LeewayPercent <= 0 || opts.LeewayPercent >= 100 {
		opts.LeewayPercent = DefaultLeewayPercent
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c, err := rest.New(root)
	if err != nil {
		return nil, fmt.Errorf("clientbuilder: root client: %w", err)
	}
	return &Builder{root: root, opts: opts, client: c, sources: map[string]*tokenSource{}}, nil
}

// Username is the user name of the ServiceAccount namespace/name.
func Username(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Config returns a configuration authenticating as the ServiceAccount
// name of the builder's namespace.
func (b *Builder) Config(name string) (*rest.Config, error) {
	if name == "" {
		return nil, fmt.Errorf("clientbuilder: a ServiceAccount name is required")
	}
	src := b.source(name)
	cfg := *b.root
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.TLS.CertData, cfg.TLS.CertFile, cfg.TLS.KeyData, cfg.TLS.KeyFile = nil, "", nil, ""
	cfg.UserAgent = userAgent(b.root.UserAgent) + "/" + Username(b.opts.Namespace, name)
	inner := b.root.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return &tokenTransport{src: src, next: rt}
	}
	return &cfg, nil
}

func (b *Builder) source(name string) *tokenSource {
	b.mu.Lock()
	defer b.mu.Unlock()
	src := b.sources[name]
	if src == nil {
		src = &tokenSource{b: b, name: name}
		b.sources[name] = src
	}
	return src
}

// userAgent is the root's user agent, or the rest client's default.
func userAgent(ua string) string {
	if ua != "" {
		return ua
	}
	return "setpoint-controller-manager"
}

// tokenTransport sets the ServiceAccount's bearer token on each request
// and drops the token when the server answers 401.
type tokenTransport struct {
	src  *tokenSource
	next http.RoundTripper
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.src.token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.src.reset(tok)
	}
	return resp, err
}

// CloseIdleConnections passes on to the wrapped transport, so that
// rest.Client.CloseIdleConnections still reaches the sockets.
func (t *tokenTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
