package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// handleConnect serves a Connect subresource as kube-apiserver does: the
// options are decoded from the query, the kind resolves the location, then
// the server streams it (pods/log), or forwards the request to it (exec,
// attach and portforward, which must upgrade; proxies, which may): an
// upgrade the backend accepts is spliced, one it refuses with an error
// reaches the client unchanged.
func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, c *registry.Connect) {
	// Like watches, connections end when the server shuts down.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.watchCtx, cancel)()
	r = r.WithContext(ctx)
	if !slices.Contains(c.Methods, r.Method) {
		s.resp.writeError(w, r, methodNotAllowed())
		return
	}
	var opts runtime.Object
	if c.NewOptions != nil {
		opts = c.NewOptions()
		if err := decodeQueryOptions(r.URL.Query(), opts); err != nil {
			s.resp.writeError(w, r, err)
			return
		}
	}
	loc, err := c.Location(r.Context(), s.env(), s.hookRequest(r, info, false), opts)
	switch {
	case err != nil:
		s.resp.writeError(w, r, err)
	case c.Stream:
		s.streamLocation(w, r, e, info, loc)
	case loc == nil:
		s.resp.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("no location for %s/%s", e.res.Resource, info.Subresource)))
	case loc.URL.Scheme == "":
		u := *loc.URL
		u.Scheme = "http" // as kube-apiserver's proxy normalizes a location
		l := *loc
		l.URL = &u
		s.forward(w, r, &l, c)
	default:
		s.forward(w, r, loc, c)
	}
}

// forward sends a request to loc: upgrades are spliced, others proxied.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, loc *registry.Location, c *registry.Connect) {
	switch {
	case isUpgradeRequest(r):
		s.proxyUpgrade(w, r, loc)
	case c.UpgradeRequired:
		s.resp.writeError(w, r, apierrors.NewBadRequest("Upgrade request required"))
	default:
		s.proxyRequest(w, r, loc, c.Subpath)
	}
}

// isUpgradeRequest reports whether r asks to switch protocols: a
// Connection header naming "upgrade" and an Upgrade header.
func isUpgradeRequest(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// streamLocation GETs loc itself and streams the body back as text/plain,
// as kube-apiserver's location streamer: no location is 204 No Content;
// a request that fails is a 500 with the client's error; a backend answer
// outside 2xx becomes the API error of its code (400 with the backend's
// body as message).
func (s *Server) streamLocation(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, loc *registry.Location) {
	if loc == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, loc.URL.String(), nil)
	if err != nil {
		s.resp.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	client := &http.Client{
		Transport:     s.transportFor(loc),
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects forbidden") },
	}
	resp, err := client.Do(req)
	if err != nil {
		s.resp.writeError(w, r, newStatusError(http.StatusInternalServerError, "", err.Error()))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		gr := schema.GroupResource{Group: e.res.Group, Resource: e.res.Resource + "/" + info.Subresource}
		s.resp.writeError(w, r, backendError(resp, gr, info.Name))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	var out io.Writer = w
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
		if loc.Flush {
			out = flushWriter{w, f}
		}
	}
	_, _ = io.Copy(out, resp.Body)
}

// backendErrorLimit bounds what is read of a backend's error body.
const backendErrorLimit = 50000

// backendError turns a backend's non-2xx answer into the API error
// kube-apiserver makes of it: 500 and 400 carry the body as message, other
// codes the generic status of the code naming the resource and name.
func backendError(resp *http.Response, gr schema.GroupResource, name string) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, backendErrorLimit))
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(errors.New(string(body)))
	case http.StatusBadRequest:
		return apierrors.NewBadRequest(string(body))
	}
	return apierrors.NewGenericServerResponse(resp.StatusCode, "", gr, name, string(body), 0, false)
}

// flushWriter sends every write at once.
type flushWriter struct {
	w io.Writer
	f http.Flusher
}

func (fw flushWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	fw.f.Flush()
	return n, err
}

// transportFor is the location's transport, or the server's transport to
// pods and services.
func (s *Server) transportFor(loc *registry.Location) http.RoundTripper {
	if loc.Transport != nil {
		return loc.Transport
	}
	return s.proxyTransport
}

// newProxyTransport reaches pods and services as kube-apiserver's proxy
// transport does: HTTP/1.1 (upgrades need it), no client certificate, the
// backends' serving certificates not verified.
func newProxyTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // as kube-apiserver's proxy transport
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 16,
	}
}

// forwardedRequest is r as the backend receives it: sent to target, the
// Host header kept, the client's credentials dropped, the client's address
// appended to X-Forwarded-For.
func forwardedRequest(r *http.Request, target *url.URL) *http.Request {
	out := r.Clone(r.Context())
	out.URL = target
	out.RequestURI = ""
	out.Header.Del("Authorization")
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := out.Header.Values("X-Forwarded-For"); len(prior) > 0 {
			host = strings.Join(prior, ", ") + ", " + host
		}
		out.Header.Set("X-Forwarded-For", host)
	}
	return out
}
