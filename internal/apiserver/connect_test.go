package apiserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// The connect tests give configmaps three test-only Connect subresources
// whose backend is the URL in the configmap's data ("url"): "stream"
// (streamed GET, like pods/log), "exec" (upgrade required) and "proxy"
// (with a subpath). A configmap without "url" has no location.

var cmGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

// backendOf reads the backend URL of the configmap the request names.
func backendOf(ctx context.Context, env registry.Env, req registry.Request) (*url.URL, error) {
	obj, err := env.Objects(cmGVR).Get(ctx, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	raw := obj.(*corev1.ConfigMap).Data["url"]
	if raw == "" {
		return nil, nil
	}
	return url.Parse(raw)
}

func connectSubresources() []registry.Subresource {
	logKind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	return []registry.Subresource{
		{Name: "exec", Kind: logKind, Verbs: []string{"create", "get"}, Connect: &registry.Connect{
			Methods: []string{http.MethodGet, http.MethodPost}, UpgradeRequired: true,
			NewOptions: func() runtime.Object { return &corev1.PodExecOptions{} },
			Location: func(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
				u, err := backendOf(ctx, env, req)
				if u == nil || err != nil {
					return nil, err
				}
				u.Path = "/exec/" + req.Name
				u.RawQuery = url.Values{"command": opts.(*corev1.PodExecOptions).Command}.Encode()
				return &registry.Location{URL: u}, nil
			},
		}},
		{Name: "proxy", Kind: logKind, Verbs: []string{"create", "delete", "get", "patch", "update"}, Connect: &registry.Connect{
			Methods: []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions},
			Subpath: true,
			Location: func(ctx context.Context, env registry.Env, req registry.Request, _ runtime.Object) (*registry.Location, error) {
				u, err := backendOf(ctx, env, req)
				if u == nil || err != nil {
					return nil, err
				}
				if req.Subpath != "" {
					u.Path = "/" + req.Subpath
				}
				return &registry.Location{URL: u}, nil
			},
		}},
		{Name: "stream", Kind: logKind, Verbs: []string{"get"}, Connect: &registry.Connect{
			Methods: []string{http.MethodGet}, Stream: true,
			NewOptions: func() runtime.Object { return &corev1.PodLogOptions{} },
			Location: func(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
				u, err := backendOf(ctx, env, req)
				if u == nil || err != nil {
					return nil, err
				}
				o := opts.(*corev1.PodLogOptions)
				u.Path = "/logs/" + req.Name
				if o.TailLines != nil {
					u.RawQuery = fmt.Sprintf("tailLines=%d", *o.TailLines)
				}
				return &registry.Location{URL: u, Flush: o.Follow}, nil
			},
		}},
	}
}

// startConnect runs a server whose configmaps have the test subresources.
func startConnect(t *testing.T) *testserver.Server {
	t.Helper()
	s, _ := start(t, func(c *apiserver.Config) {
		for _, r := range c.Resources {
			if r.Group == "" && r.Resource == "configmaps" {
				r.Subresources = append(r.Subresources, connectSubresources()...)
			}
		}
	})
	return s
}

// do sends an authenticated request with extra headers.
func doConnect(t *testing.T, s *testserver.Server, method, path string, hdr http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantStatus checks an error answer's code, reason and message.
func wantStatus(t *testing.T, what string, code int, body []byte, wantCode int, wantReason, wantMsg string) {
	t.Helper()
	st := decode[status](t, body)
	if code != wantCode || st.Code != wantCode || st.Reason != wantReason || st.Message != wantMsg {
		t.Errorf("%s: %d %s %q, want %d %s %q", what, code, st.Reason, st.Message, wantCode, wantReason, wantMsg)
	}
}

// closedPort returns a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestConnectStream(t *testing.T) {
	s := startConnect(t)
	release := make(chan struct{})
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/logs/follow":
			w.WriteHeader(http.StatusOK)
			fmt.Fprintln(w, "first")
			w.(http.Flusher).Flush()
			<-release // the client must see "first" before the backend ends
			fmt.Fprintln(w, "second")
		case "/logs/plain":
			fmt.Fprintf(w, "query %s\n", r.URL.RawQuery)
		case "/logs/bad":
			http.Error(w, "no logs for you", http.StatusBadRequest)
		case "/logs/gone":
			http.Error(w, "nothing", http.StatusNotFound)
		case "/logs/busy":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/logs/broken":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "kaput")
		}
	}))
	defer backend.Close()
	for _, name := range []string{"follow", "plain", "bad", "gone", "busy", "broken"} {
		createCM(t, s, name, map[string]string{"url": backend.URL})
	}
	down := closedPort(t)
	createCM(t, s, "down", map[string]string{"url": "https://" + down})
	createCM(t, s, "nowhere", nil)
	base := cmPath + "/"

	t.Run("follow streams each line as the backend writes it", func(t *testing.T) {
		resp := doConnect(t, s, http.MethodGet, base+"follow/stream?follow=true", nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain" {
			t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		if err != nil || line != "first\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		close(release)
		if rest := readAll(t, br); rest != "second\n" {
			t.Errorf("rest %q", rest)
		}
	})
	t.Run("options reach the location", func(t *testing.T) {
		resp := doConnect(t, s, http.MethodGet, base+"plain/stream?tailLines=3", nil)
		if got := readAll(t, resp.Body); resp.StatusCode != http.StatusOK || got != "query tailLines=3\n" {
			t.Errorf("%d %q", resp.StatusCode, got)
		}
	})
	t.Run("backend errors become API errors", func(t *testing.T) {
		for _, c := range []struct {
			name, reason, msg string
			code              int
		}{
			{"bad", "BadRequest", "no logs for you\n", 400},
			{"gone", "NotFound", "the server could not find the requested resource ( configmaps/stream gone)", 404},
			{"busy", "ServiceUnavailable", "the server is currently unable to handle the request ( configmaps/stream busy)", 503},
			{"broken", "InternalError", "Internal error occurred: kaput", 500},
		} {
			code, body, _ := s.Do(t, http.MethodGet, base+c.name+"/stream", "", nil)
			wantStatus(t, c.name, code, body, c.code, c.reason, c.msg)
		}
	})
	t.Run("backend down is a 500 with the client's error", func(t *testing.T) {
		code, body, _ := s.Do(t, http.MethodGet, base+"down/stream", "", nil)
		want := fmt.Sprintf("Get \"https://%s/logs/down\": dial tcp %s: connect: connection refused", down, down)
		wantStatus(t, "down", code, body, 500, "", want)
	})
	t.Run("no location is 204", func(t *testing.T) {
		resp := doConnect(t, s, http.MethodGet, base+"nowhere/stream", nil)
		if resp.StatusCode != http.StatusNoContent || readAll(t, resp.Body) != "" {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
	t.Run("a malformed option is a 400 with the parser's message", func(t *testing.T) {
		code, body, _ := s.Do(t, http.MethodGet, base+"plain/stream?tailLines=abc", "", nil)
		wantStatus(t, "tailLines", code, body, 400, "BadRequest", `strconv.ParseInt: parsing "abc": invalid syntax`)
		code, body, _ = s.Do(t, http.MethodGet, base+"plain/stream?sinceTime=bad", "", nil)
		wantStatus(t, "sinceTime", code, body, 400, "BadRequest", `parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"`)
	})
	t.Run("routing errors", func(t *testing.T) {
		code, body, _ := s.Do(t, http.MethodPut, base+"plain/stream", "", nil)
		wantStatus(t, "PUT", code, body, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
		code, body, _ = s.Do(t, http.MethodGet, base+"plain/stream/extra", "", nil)
		wantStatus(t, "subpath", code, body, 404, "NotFound", "the server could not find the requested resource")
		code, body, _ = s.Do(t, http.MethodGet, base+"missing/unknown", "", nil)
		wantStatus(t, "unknown subresource", code, body, 404, "NotFound", "the server could not find the requested resource")
		code, body, _ = s.Do(t, http.MethodGet, base+"missing/stream", "", nil)
		wantStatus(t, "missing object", code, body, 404, "NotFound", `configmaps "missing" not found`)
	})
}

// rawUpgrade sends an HTTP/1.1 upgrade request over TLS and returns the
// connection and the response head.
func rawUpgrade(t *testing.T, s *testserver.Server, path string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	u, _ := url.Parse(s.URL)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: s.API.CA().Pool(), NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nContent-Length: 0\r\n\r\n",
		path, u.Host, s.Token)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, resp
}

func TestConnectUpgrade(t *testing.T) {
	s := startConnect(t)
	var (
		mu   sync.Mutex
		seen []*http.Request
	)
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		switch r.URL.Path {
		case "/exec/refused":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Backend", "refused")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"simulated","reason":"BadRequest","code":400}`)
		case "/exec/ok-no-switch":
			w.WriteHeader(http.StatusOK)
		case "/exec/echo":
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
			buf.Flush()
			line, _ := buf.ReadString('\n')
			fmt.Fprintf(conn, "echo %s", line)
		}
	}))
	defer backend.Close()
	for _, name := range []string{"refused", "ok-no-switch", "echo"} {
		createCM(t, s, name, map[string]string{"url": backend.URL})
	}
	down := closedPort(t)
	createCM(t, s, "down", map[string]string{"url": "https://" + down})
	base := cmPath + "/"

	t.Run("a refusal is relayed as is", func(t *testing.T) {
		_, br, resp := rawUpgrade(t, s, base+"refused/exec?command=ls&command=-l")
		body := readAll(t, io.LimitReader(br, resp.ContentLength))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Backend") != "refused" ||
			body != `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"simulated","reason":"BadRequest","code":400}` {
			t.Errorf("%d %v %s", resp.StatusCode, resp.Header, body)
		}
		mu.Lock()
		r := seen[len(seen)-1]
		mu.Unlock()
		if r.URL.RawQuery != "command=ls&command=-l" || r.Header.Get("Authorization") != "" ||
			r.Header.Get("Upgrade") != "SPDY/3.1" || r.Header.Get("X-Forwarded-For") != "127.0.0.1" {
			t.Errorf("backend saw %s %v", r.URL, r.Header)
		}
	})
	t.Run("an accepted upgrade is spliced", func(t *testing.T) {
		conn, br, resp := rawUpgrade(t, s, base+"echo/exec")
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != "SPDY/3.1" {
			t.Fatalf("status %d %v", resp.StatusCode, resp.Header)
		}
		fmt.Fprint(conn, "hello\n")
		if line, err := br.ReadString('\n'); err != nil || line != "echo hello\n" {
			t.Errorf("read %q, %v", line, err)
		}
	})
	t.Run("a backend that does not switch is a 500", func(t *testing.T) {
		_, br, resp := rawUpgrade(t, s, base+"ok-no-switch/exec")
		wantStatus(t, "no switch", resp.StatusCode, []byte(readAll(t, io.LimitReader(br, resp.ContentLength))),
			500, "", "invalid upgrade response: status code 200")
	})
	t.Run("backend down is a 500 error dialing backend", func(t *testing.T) {
		_, br, resp := rawUpgrade(t, s, base+"down/exec")
		wantStatus(t, "down", resp.StatusCode, []byte(readAll(t, io.LimitReader(br, resp.ContentLength))),
			500, "", fmt.Sprintf("error dialing backend: dial tcp %s: connect: connection refused", down))
	})
	t.Run("without an upgrade it is a 400", func(t *testing.T) {
		code, body, _ := s.Do(t, http.MethodPost, base+"echo/exec?command=ls", "", nil)
		wantStatus(t, "plain POST", code, body, 400, "BadRequest", "Upgrade request required")
	})
}

func TestConnectProxy(t *testing.T) {
	s := startConnect(t)
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/elsewhere/", http.StatusFound)
		case "/away":
			http.Redirect(w, r, "https://example.com/x", http.StatusFound)
		default:
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("X-Echo", "yes")
			w.WriteHeader(http.StatusCreated)
			body, _ := io.ReadAll(r.Body)
			_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
				"headers": r.Header, "host": r.Host, "body": string(body)})
		}
	}))
	defer backend.Close()
	createCM(t, s, "web", map[string]string{"url": backend.URL})
	down := closedPort(t)
	createCM(t, s, "down", map[string]string{"url": "https://" + down})
	base := cmPath + "/web/proxy"
	type echo struct {
		Method, Path, Query, Host, Body string
		Headers                         http.Header
	}

	t.Run("method, path, query, headers and body are forwarded", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPut, s.URL+base+"/some/path?q=1&q=2", strings.NewReader("payload"))
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("X-Custom", "c")
		resp, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		e := decode[echo](t, []byte(readAll(t, resp.Body)))
		u, _ := url.Parse(s.URL)
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Echo") != "yes" || resp.Header.Get("Access-Control-Allow-Origin") != "" ||
			e.Method != "PUT" || e.Path != "/some/path" || e.Query != "q=1&q=2" || e.Body != "payload" || e.Host != u.Host ||
			e.Headers.Get("Authorization") != "" || e.Headers.Get("X-Custom") != "c" ||
			e.Headers.Get("X-Forwarded-For") != "127.0.0.1" || e.Headers.Get("X-Forwarded-Uri") != base+"/some/path" {
			t.Errorf("%d %v %+v", resp.StatusCode, resp.Header, e)
		}
	})
	t.Run("a trailing slash is kept", func(t *testing.T) {
		resp := doConnect(t, s, http.MethodGet, base+"/dir/", nil)
		if e := decode[echo](t, []byte(readAll(t, resp.Body))); e.Path != "/dir/" || e.Headers.Get("X-Forwarded-Uri") != base+"/dir/" {
			t.Errorf("%+v", e)
		}
		resp = doConnect(t, s, http.MethodGet, base+"/", nil)
		if e := decode[echo](t, []byte(readAll(t, resp.Body))); e.Path != "/" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("an empty path is redirected to /", func(t *testing.T) {
		s.Client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		defer func() { s.Client.CheckRedirect = nil }()
		resp := doConnect(t, s, http.MethodGet, base+"?a=b", nil)
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != base+"/?a=b" {
			t.Errorf("%d %v", resp.StatusCode, resp.Header)
		}
		resp = doConnect(t, s, http.MethodGet, base+"/redirect", nil)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != base+"/elsewhere/" {
			t.Errorf("redirect: %d %v", resp.StatusCode, resp.Header)
		}
		resp = doConnect(t, s, http.MethodGet, base+"/away", nil)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://example.com/x" {
			t.Errorf("redirect away: %d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("OPTIONS is proxied", func(t *testing.T) {
		resp := doConnect(t, s, http.MethodOptions, base+"/x", nil)
		if e := decode[echo](t, []byte(readAll(t, resp.Body))); e.Method != http.MethodOptions {
			t.Errorf("%+v", e)
		}
	})
	t.Run("backend down is a 503", func(t *testing.T) {
		code, body, _ := s.Do(t, http.MethodGet, cmPath+"/down/proxy/x", "", nil)
		wantStatus(t, "down", code, body, 503, "ServiceUnavailable",
			fmt.Sprintf("error trying to reach service: dial tcp %s: connect: connection refused", down))
	})
	t.Run("OPTIONS elsewhere is still refused", func(t *testing.T) {
		code, _, _ := s.Do(t, http.MethodOptions, cmPath+"/web/status", "", nil)
		if code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
			t.Errorf("OPTIONS status: %d", code)
		}
	})
}

// Streams and spliced connections end when the server shuts down, as
// watches do, instead of holding its shutdown.
func TestConnectEndsAtShutdown(t *testing.T) {
	s := startConnect(t)
	hold := make(chan struct{})
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/exec/echo" {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
			buf.Flush()
			<-hold
			return
		}
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		<-hold
	}))
	defer backend.Close()
	defer close(hold) // before the backend closes: it waits for its handlers
	createCM(t, s, "endless", map[string]string{"url": backend.URL})
	createCM(t, s, "echo", map[string]string{"url": backend.URL})
	resp := doConnect(t, s, http.MethodGet, cmPath+"/endless/stream?follow=true", nil)
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	conn, _, up := rawUpgrade(t, s, cmPath+"/echo/exec")
	if up.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %d", up.StatusCode)
	}
	stopped := make(chan struct{})
	go func() { s.Stop(t); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's shutdown waits for a connect stream")
	}
	_, _ = io.ReadAll(br) // ends (EOF or a reset): the stream is over
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the spliced connection is still open after shutdown")
	}
}
