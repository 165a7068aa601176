package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// Client sends requests to one API server at a time, failing over to the
// next of Config.Hosts on transport errors. It is safe for concurrent use;
// all of its fields but cur are fixed by New.
type Client struct {
	// bases are Config.Host then Config.Hosts, parsed; never empty.
	bases []*url.URL
	// cur indexes the server in use in bases; failover advances it.
	cur        atomic.Int32
	http       *http.Client
	creds      credentials
	userAgent  string
	timeout    time.Duration // Config.Timeout: bounds non-watch requests
	maxRetries int
	clock      clock.Clock
	limiter    *RateLimiter // nil when Config.QPS < 0: unlimited
	metrics    *Metrics     // nil: no metrics
	codecs     *scheme.Codecs
	// protobuf is set when Config.ContentType asks for protobuf; accept
	// is then the Accept header of requests for built-in kinds.
	protobuf bool
	accept   string
	// contentTypeSet is set when Config.ContentType was given (JSON
	// included): PreferProtobuf then leaves the choice alone.
	contentTypeSet bool
	// builtin is NewScheme(), built on first need by kindOf.
	builtinOnce sync.Once
	builtin     *runtime.Scheme
}

// New builds a client from cfg. It validates Host and the TLS material and
// reads BearerTokenFile when BearerToken is empty. Its scheme is
// NewScheme(); NewWithScheme takes one of yours.
func New(cfg *Config) (*Client, error) { return NewWithScheme(cfg, nil) }

func newClient(cfg *Config, codecs *scheme.Codecs) (*Client, error) {
	var bases []*url.URL
	for _, h := range append([]string{cfg.Host}, cfg.Hosts...) {
		base, err := parseHost(h)
		if err != nil {
			return nil, err
		}
		bases = append(bases, base)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	creds, err := newCredentials(cfg, clk)
	if err != nil {
		return nil, err
	}
	rt := cfg.Transport
	if rt == nil {
		tr, err := newTransport(&cfg.TLS, cfg.DisableCompression)
		if err != nil {
			return nil, fmt.Errorf("build transport: %w", err)
		}
		if ec, ok := creds.(*execCreds); ok {
			tr.TLSClientConfig.GetClientCertificate = ec.clientCertificate
			ec.onCertChange = tr.CloseIdleConnections
		}
		rt = tr
	}
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	qps, burst := cfg.rateLimit()
	c := &Client{
		bases: bases, http: &http.Client{Transport: rt}, creds: creds, userAgent: cfg.userAgent(),
		timeout: cfg.Timeout, maxRetries: cfg.maxRetries(), clock: clk,
		limiter: NewRateLimiter(qps, burst, clk), metrics: cfg.Metrics, codecs: codecs,
	}
	c.contentTypeSet = strings.TrimSpace(cfg.ContentType) != ""
	switch ct := strings.TrimSpace(cfg.ContentType); {
	case wantsProtobuf(ct):
		c.protobuf, c.accept = true, defaultProtobufAccept
		if cfg.AcceptContentTypes != "" {
			c.accept = cfg.AcceptContentTypes
		}
	case ct != "" && ct != ContentTypeJSON:
		return nil, fmt.Errorf("content type %q: want %s or %s", cfg.ContentType, ContentTypeJSON, ContentTypeProtobuf)
	}
	return c, nil
}

func parseHost(host string) (*url.URL, error) {
	base, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("parse host %q: %w", host, err)
	}
	if base.Scheme != "https" && base.Scheme != "http" || base.Host == "" {
		return nil, fmt.Errorf("host %q: want an http(s)://host[:port] URL", host)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	return base, nil
}

// Host returns the base URL of the server the client currently sends to.
func (c *Client) Host() string { return c.bases[c.cur.Load()].String() }

// failover moves off server i after a transport error on it, unless
// another request already did; it reports whether the client now uses a
// server other than i.
func (c *Client) failover(i int32) bool {
	if len(c.bases) == 1 {
		return false
	}
	c.cur.CompareAndSwap(i, (i+1)%int32(len(c.bases)))
	return c.cur.Load() != i
}

// CloseIdleConnections closes the transport's idle connections; call it
// when done with the client to release its sockets promptly.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// request is one API call before it is sent. body is kept as bytes so that
// a retry can send it again.
type request struct {
	method, path string
	query        url.Values
	body         []byte
	contentType  string
	// accept is the Accept header; "" means application/json.
	accept string
	gr     schema.GroupResource // for errors built from non-Status bodies
	name   string
}

// do sends req with rate limiting and retries, and returns the successful
// response (2xx). The caller must close its body. Any other outcome is an
// error: a non-2xx answer becomes a *apierrors.StatusError.
func (c *Client) do(ctx context.Context, req *request) (*http.Response, error) {
	query := req.query.Encode()
	switched := 0 // servers moved to without backoff in this call
	refreshed := false
	start, host := c.clock.Now(), c.bases[c.cur.Load()].Host
	defer func() { c.metrics.observeLatency(req.method, host, c.clock.Since(start)) }()
	for attempt := 0; ; attempt++ {
		if err := c.limiter.Wait(ctx); err != nil {
			return nil, err
		}
		i := c.cur.Load()
		u := *c.bases[i]
		u.Path += req.path
		u.RawQuery = query
		host = u.Host
		resp, used, err := c.send(ctx, req, u.String())
		c.metrics.countResult(req.method, host, resp, err)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		if errors.As(err, new(credentialsError)) {
			return nil, fmt.Errorf("%s %s: %w", req.method, u.Path, err)
		}
		if err == nil && resp.StatusCode == http.StatusUnauthorized && !refreshed && c.creds.refresh(used) {
			// Rotated credentials (a re-read token file, a plugin run
			// again): send once more with them.
			refreshed = true
			closeBody(resp)
			attempt--
			continue
		}
		if ctx.Err() != nil {
			closeBody(resp)
			return nil, fmt.Errorf("%s %s: %w", req.method, u.Path, ctx.Err())
		}
		var wait time.Duration
		retry := false
		if attempt < c.maxRetries {
			wait, retry = shouldRetry(req.method, attempt+1, resp, err)
		}
		if err != nil && c.failover(i) && switched < len(c.bases)-1 {
			// Another server may answer at once: try it without waiting,
			// once per server, before backing off.
			switched++
			wait = 0
		}
		if !retry {
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", req.method, u.Path, err)
			}
			return nil, c.errorFrom(req, resp)
		}
		closeBody(resp)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s %s: waiting to retry: %w", req.method, u.Path, err)
		}
	}
}

// send sends one attempt of req to u, and returns what credentials it
// carried (for refreshing them on a 401).
func (c *Client) send(ctx context.Context, req *request, u string) (*http.Response, any, error) {
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return nil, nil, fmt.Errorf("build request: %w", err)
	}
	accept := req.accept
	if accept == "" {
		accept = ContentTypeJSON
	}
	hr.Header.Set("Accept", accept)
	hr.Header.Set("User-Agent", c.userAgent)
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	used, err := c.creds.apply(hr)
	if err != nil {
		return nil, nil, credentialsError{err}
	}
	resp, err := c.http.Do(hr)
	return resp, used, err
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// credentialsError is a failure to get the client's credentials (a token
// file that cannot be read, an exec plugin that fails): no server was
// asked, so neither retrying nor failing over helps.
type credentialsError struct{ err error }

func (e credentialsError) Error() string { return e.err.Error() }
func (e credentialsError) Unwrap() error { return e.err }

func closeBody(resp *http.Response) {
	if resp != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
}

// errorFrom turns a non-2xx response into an API error: the server's Status
// when the body is one, else a generic error for the status code.
func (c *Client) errorFrom(req *request, resp *http.Response) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read error response (%d): %w", req.method, req.path, resp.StatusCode, err)
	}
	var st metav1.Status
	if c.decodeStatus(resp.Header.Get("Content-Type"), body, &st) == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	ra, _ := retryAfter(resp.Header)
	return apierrors.NewGenericServerResponse(resp.StatusCode, req.method, req.gr, req.name,
		string(body), int(ra.Seconds()), true)
}

// decodeStatus decodes a Status body in the encoding its Content-Type
// names (protobuf or JSON).
func (c *Client) decodeStatus(contentType string, body []byte, st *metav1.Status) error {
	if isProtobuf(contentType) {
		_, _, err := c.codecs.Proto.Decode(body, nil, st)
		return err
	}
	return json.Unmarshal(body, st)
}
