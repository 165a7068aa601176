package apiserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// proxyUpgrade forwards a request that switches protocols to loc (its query
// is the location's: exec options as the kubelet takes them). A backend
// that switches too is spliced to the client until either side closes; one
// that answers an error (4xx, 5xx) has its answer relayed unchanged; any
// other answer, or no connection, is a 500, as kube-apiserver answers.
func (s *Server) proxyUpgrade(w http.ResponseWriter, r *http.Request, loc *registry.Location) {
	target := *loc.URL
	out := forwardedRequest(r, &target)
	out.Body, out.ContentLength = http.NoBody, 0
	resp, err := s.transportFor(loc).RoundTrip(out)
	if err != nil {
		s.resp.writeError(w, r, newStatusError(http.StatusInternalServerError, "", "error dialing backend: "+err.Error()))
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
		backend, ok := resp.Body.(io.ReadWriteCloser)
		if !ok {
			s.resp.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("backend connection of type %T cannot be spliced", resp.Body)))
			return
		}
		s.splice(w, r, resp, backend)
	case resp.StatusCode < http.StatusBadRequest:
		s.resp.writeError(w, r, newStatusError(http.StatusInternalServerError, "",
			fmt.Sprintf("invalid upgrade response: status code %d", resp.StatusCode)))
	default:
		relayResponse(w, resp)
	}
}

// relayResponse copies a backend's answer to the client as it is.
func relayResponse(w http.ResponseWriter, resp *http.Response) {
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// splice hands the client's connection over to the backend's once the
// backend switched protocols: the 101 answer is written to the client, then
// bytes flow both ways until one side closes.
func (s *Server) splice(w http.ResponseWriter, r *http.Request, resp *http.Response, backend io.ReadWriteCloser) {
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.resp.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("error hijacking connection: %w", err)))
		return
	}
	defer client.Close()
	_ = client.SetDeadline(time.Time{})
	if err := writeSwitchingProtocols(buf.Writer, resp); err != nil {
		return
	}
	// Bytes the client sent after its request, already read by the
	// server, go to the backend first.
	pending, _ := buf.Reader.Peek(buf.Reader.Buffered())
	if len(pending) > 0 {
		if _, err := backend.Write(pending); err != nil {
			return
		}
	}
	var once sync.Once
	done := make(chan struct{})
	closeBoth := func() { once.Do(func() { close(done); backend.Close(); client.Close() }) }
	go func() { _, _ = io.Copy(backend, client); closeBoth() }()
	go func() { _, _ = io.Copy(client, backend); closeBoth() }()
	select {
	case <-done:
	case <-r.Context().Done(): // the server shuts down
		closeBoth()
	}
}

// writeSwitchingProtocols writes the backend's 101 answer (status line and
// headers) to the client.
func writeSwitchingProtocols(bw *bufio.Writer, resp *http.Response) error {
	if _, err := fmt.Fprintf(bw, "HTTP/1.1 %s\r\n", resp.Status); err != nil {
		return err
	}
	if err := resp.Header.Write(bw); err != nil {
		return err
	}
	if _, err := bw.WriteString("\r\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// proxyRequest forwards a request that does not switch protocols to loc
// with the client's query, as kube-apiserver's proxy does: a request path
// ending in "/" keeps it; an empty path is redirected (301) to the
// request's path with a "/" added; the backend's answer is relayed with
// CORS headers removed and, for subpath proxies, redirects rewritten to
// stay under the proxy path; a backend that cannot be reached is a 503.
func (s *Server) proxyRequest(w http.ResponseWriter, r *http.Request, loc *registry.Location, rewrite bool) {
	target := *loc.URL
	target.RawQuery = r.URL.RawQuery
	suffix := loc.URL.Path
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(target.Path, "/") {
		target.Path += "/"
		suffix += "/"
	}
	if target.Path == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		q := ""
		if r.URL.RawQuery != "" {
			q = "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", r.URL.Path+"/"+q)
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	prefix := strings.TrimSuffix(r.URL.Path, suffix)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			fwd := forwardedRequest(pr.In, &target)
			pr.Out.URL, pr.Out.Host = fwd.URL, fwd.Host
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Set("X-Forwarded-For", fwd.Header.Get("X-Forwarded-For"))
			if rewrite {
				uri := path.Join(prefix, target.EscapedPath())
				if strings.HasSuffix(target.Path, "/") {
					uri += "/"
				}
				pr.Out.Header.Set("X-Forwarded-Uri", uri)
			}
		},
		Transport:     s.transportFor(loc),
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			for _, h := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
				"Access-Control-Allow-Methods", "Access-Control-Allow-Origin"} {
				resp.Header.Del(h)
			}
			if l := resp.Header.Get("Location"); l != "" && rewrite {
				u, err := url.Parse(l)
				if err != nil {
					return apierrors.NewInternalError(fmt.Errorf("error trying to parse Location header: %v", err))
				}
				resp.Header.Set("Location", rewriteRedirect(u, &target, r.Host, prefix))
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if _, ok := err.(apierrors.APIStatus); !ok {
				err = apierrors.NewServiceUnavailable("error trying to reach service: " + err.Error())
			}
			s.resp.writeError(w, r, err)
		},
	}
	rp.ServeHTTP(w, r)
}

// rewriteRedirect makes a backend's redirect to itself (an absolute path,
// or a URL on the backend's or the request's host) point under the proxy
// path prefix; other redirects are left alone.
func rewriteRedirect(u, backend *url.URL, requestHost, prefix string) string {
	otherHost := u.Host != "" && u.Host != backend.Host && u.Host != requestHost
	if otherHost || !strings.HasPrefix(u.Path, "/") {
		return u.String()
	}
	if u.Host != requestHost {
		u.Scheme, u.Host = "", ""
	}
	if strings.HasPrefix(u.Path, prefix) {
		return u.String()
	}
	orig := u.Path
	u.Path = path.Join(prefix, u.Path)
	if strings.HasSuffix(orig, "/") {
		u.Path += "/"
	}
	return u.String()
}
