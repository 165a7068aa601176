package webhookclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Options tune a Client.
type Options struct {
	// MaxIdleConnsPerHost is how many idle connections a transport keeps
	// per webhook host (0: 100).
	MaxIdleConnsPerHost int
	// DialTimeout bounds connecting (0: 30s); the request's Timeout bounds
	// the whole call.
	DialTimeout time.Duration
}

func (o Options) maxIdle() int {
	if o.MaxIdleConnsPerHost > 0 {
		return o.MaxIdleConnsPerHost
	}
	return 100
}

// Client calls webhooks. The zero value is not usable: use New.
type Client struct {
	tr     *transports
	status runtime.Decoder
}

// New returns a Client.
func New(o Options) *Client {
	dt := o.DialTimeout
	if dt == 0 {
		dt = 30 * time.Second
	}
	return &Client{tr: &transports{dialer: &net.Dialer{Timeout: dt, KeepAlive: 30 * time.Second}, opts: o}, status: newStatusDecoder()}
}

// Close drops the idle connections of every cached transport.
func (c *Client) Close() { c.tr.closeIdle() }

// Request is one call.
type Request struct {
	// Body is the JSON document posted (Call fills it).
	Body []byte
	// Timeout bounds the call and is sent as ?timeout= (0: none).
	Timeout time.Duration
	// Resolver finds a Service reference's endpoints (required for
	// Service references).
	Resolver Resolver
	// UserAgent is sent as User-Agent when set.
	UserAgent string
}

// Response is a webhook's answer with a status in 200–206.
type Response struct {
	StatusCode  int
	ContentType string
	Body        []byte
	Header      http.Header
}

// URL is where a request to cfg goes, ?timeout= included; a Service
// reference's host is its <name>.<namespace>.svc:<port>.
func URL(cfg ClientConfig, timeout time.Duration) (string, error) {
	t, err := resolveTarget(cfg)
	if err != nil {
		return "", err
	}
	u := t.base
	if timeout > 0 {
		u.RawQuery = "timeout=" + timeout.String()
	}
	return u.String(), nil
}

// Post sends req.Body to the webhook cfg names. Its errors are the
// package's (see doc.go).
func (c *Client) Post(ctx context.Context, cfg ClientConfig, req Request) (*Response, error) {
	t, err := resolveTarget(cfg)
	if err != nil {
		return nil, err
	}
	tr, err := c.tr.get(cfg.CABundle, t.serverName)
	if err != nil {
		return nil, err
	}
	if t.service != nil {
		if req.Resolver == nil {
			return nil, &ConfigError{fmt.Errorf("no resolver for service %s/%s", t.service.Namespace, t.service.Name)}
		}
		ctx = context.WithValue(ctx, dialKey{}, &dialTarget{hostPort: t.base.Host, service: t.service, resolver: req.Resolver})
	}
	if req.Timeout > 0 && !deadlineBefore(ctx, req.Timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	u := t.base
	if req.Timeout > 0 {
		u.RawQuery = "timeout=" + req.Timeout.String()
	}
	hr, err := newPost(ctx, &u, req)
	if err != nil {
		return nil, &ConfigError{err}
	}
	resp, err := (&http.Client{Transport: tr}).Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", http.MethodPost, u.String(), err)
	}
	out := &Response{StatusCode: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body, Header: resp.Header}
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		return out, statusError(c.status, out)
	}
	return out, nil
}

// deadlineBefore reports whether ctx ends no later than timeout from now:
// a timeout of its own would then change nothing.
func deadlineBefore(ctx context.Context, timeout time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) <= timeout
}

// newPost is the POST of req.Body to u, as http.NewRequestWithContext
// makes it from u's text, without printing and parsing u again.
func newPost(ctx context.Context, u *url.URL, req Request) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "", nil)
	if err != nil {
		return nil, err
	}
	hr.URL, hr.Host = u, strings.TrimSuffix(u.Host, ":")
	body := req.Body
	hr.ContentLength = int64(len(body))
	if len(body) > 0 {
		hr.Body = io.NopCloser(bytes.NewReader(body))
		hr.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	} else {
		hr.Body, hr.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	hr.Header["Content-Type"] = []string{"application/json"}
	hr.Header["Accept"] = []string{"application/json, */*"}
	if req.UserAgent != "" {
		hr.Header["User-Agent"] = []string{req.UserAgent}
	}
	return hr, nil
}

// readBody reads an answer's body, in one allocation when its length is
// known.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= maxKnownLength {
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(resp.Body)
}

// maxKnownLength bounds the buffer readBody makes from a Content-Length:
// a longer answer is read as it comes.
const maxKnownLength = 1 << 20

// maxErrorBody is how much of a non-Status error body becomes the
// message, as kube's REST client caps it.
const maxErrorBody = 2048

// statusError is the error of an answer outside 200–206, as kube's REST
// client makes it: the Status the body holds, else a generic one.
func statusError(dec runtime.Decoder, r *Response) error {
	if st, ok := decodeStatus(dec, r.Body); ok && st.Status == metav1.StatusFailure {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	body := r.Body
	if len(body) > maxErrorBody {
		body = body[:maxErrorBody]
	}
	msg := "unknown"
	if isText(r.ContentType) {
		msg = strings.TrimSpace(string(body))
	}
	return apierrors.NewGenericServerResponse(r.StatusCode, "POST", schema.GroupResource{}, "", msg, retryAfter(r.Header), true)
}

// decodeStatus reads body as a metav1.Status (kind and apiVersion
// defaulting to v1 Status).
func decodeStatus(dec runtime.Decoder, body []byte) (*metav1.Status, bool) {
	if len(body) == 0 {
		return nil, false
	}
	out, _, err := dec.Decode(body, &schema.GroupVersionKind{Version: "v1", Kind: "Status"}, nil)
	if err != nil {
		return nil, false
	}
	st, ok := out.(*metav1.Status)
	return st, ok
}

func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.HasPrefix(mt, "text/")
}

func retryAfter(h http.Header) int {
	var n int
	if _, err := fmt.Sscanf(h.Get("Retry-After"), "%d", &n); err != nil {
		return 0
	}
	return n
}

// Call encodes in with codec, posts it and decodes the answer into out,
// as kube's REST client does (Result.Into): an empty body and a body that
// does not decode are errors; a decoded failure Status is its StatusError.
func (c *Client) Call(ctx context.Context, cfg ClientConfig, req Request, codec runtime.Codec, in, out runtime.Object) error {
	var buf bytes.Buffer
	if err := codec.Encode(in, &buf); err != nil {
		return fmt.Errorf("encode %T: %w", in, err)
	}
	req.Body = buf.Bytes()
	resp, err := c.Post(ctx, cfg, req)
	if err != nil {
		return err
	}
	return Decode(resp, codec, out)
}

// Decode decodes an answer of Post into out as Call does.
func Decode(resp *Response, codec runtime.Decoder, out runtime.Object) error {
	ct := resp.ContentType
	if ct == "" {
		ct = "application/json"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(resp.Body) == 0 {
		return fmt.Errorf("0-length response with status code: %d and content type: %s", resp.StatusCode, ct)
	}
	got, _, err := codec.Decode(resp.Body, nil, out)
	if err != nil || got == out {
		return err
	}
	if st, ok := got.(*metav1.Status); ok && st.Status != metav1.StatusSuccess {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return nil
}
