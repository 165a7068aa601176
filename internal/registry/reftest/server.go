package reftest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// Server is an API server the cases are sent to: setpoint's test server,
// or the reference when recording.
type Server struct {
	// Test is the setpoint server (nil for the reference).
	Test   *testserver.Server
	base   string
	token  string
	client *http.Client
}

// Start runs a setpoint test server until the test ends.
func Start(t testing.TB, opts testserver.Options) *Server {
	t.Helper()
	return Wrap(testserver.Start(t, opts))
}

// Wrap sends cases to a running test server.
func Wrap(s *testserver.Server) *Server {
	return &Server{Test: s, base: s.URL, token: s.Token, client: s.Client}
}

// Reference connects to the server of a kubeconfig (bearer token or
// client certificate, CA data or file).
func Reference(t testing.TB, kubeconfig string) *Server {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ca := cfg.TLS.CAData
	if len(ca) == 0 && cfg.TLS.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLS.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if len(cfg.TLS.CertData) > 0 {
		cert, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: tc}
	t.Cleanup(tr.CloseIdleConnections)
	return &Server{base: cfg.Host, token: cfg.BearerToken, client: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// Do sends method path with body ("" for none; JSON, a merge patch for
// PATCH) as the admin and returns the status code and the body.
func (s *Server) Do(t testing.TB, method, path, body string) (int, []byte) {
	t.Helper()
	r := Request{Method: method, Path: path}
	if body != "" {
		r.Body = json.RawMessage(body)
	}
	code, out, _ := s.send(t, r)
	return code, out
}

// Must sends a request that must be answered with code want, decodes the
// answer into out (when not nil) and returns the answer's headers.
func (s *Server) Must(t testing.TB, method, path, body string, want int, out any) http.Header {
	t.Helper()
	r := Request{Method: method, Path: path}
	if body != "" {
		r.Body = json.RawMessage(body)
	}
	code, b, h := s.send(t, r)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return h
}

// Send performs r as the admin (its Accept and ContentType as a Case's)
// and returns the status code, the body and the headers.
func (s *Server) Send(t testing.TB, r Request) (int, []byte, http.Header) {
	t.Helper()
	return s.send(t, r)
}

// send performs a request and returns the status code, the body and the
// headers. An edit reads the object, applies the patch and writes it back,
// again while the write conflicts with one made in between (a controller
// of the reference).
func (s *Server) send(t testing.TB, r Request) (int, []byte, http.Header) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		body := []byte(r.Body)
		if len(r.Edit) > 0 {
			body = s.edited(t, r)
		}
		ctype := r.ContentType
		switch {
		case ctype != "" || body == nil:
		case r.Method == http.MethodPatch:
			ctype = "application/merge-patch+json"
		default:
			ctype = "application/json"
		}
		code, out, h := s.raw(t, r.Method, r.Path, ctype, r.Accept, body)
		if code != http.StatusConflict || len(r.Edit) == 0 || attempt == 4 {
			return code, out, h
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// edited reads the object at r.Path and applies r.Edit to it.
func (s *Server) edited(t testing.TB, r Request) []byte {
	t.Helper()
	code, cur, _ := s.raw(t, http.MethodGet, pathOnly(r.Path), "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("edit %s: read %d %s", r.Path, code, cur)
	}
	edited, err := jsonpatch.MergePatch(cur, r.Edit)
	if err != nil {
		t.Fatalf("edit %s: %v", r.Path, err)
	}
	return edited
}

func (s *Server) raw(t testing.TB, method, path, ctype, accept string, body []byte) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	// The field manager of the writes (managedFields) on both servers.
	req.Header.Set("User-Agent", "reftest")
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp.StatusCode, out, resp.Header
}

func pathOnly(p string) string { return strings.SplitN(p, "?", 2)[0] }

// collectionPath is the collection a request addresses: the path up to
// the resource, without the object's name, subresource and query.
func collectionPath(p string) string {
	p = pathOnly(p)
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var prefix int // segments before the resource: api/v1 or apis/<group>/<version>
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		prefix = 2
	case len(parts) >= 3 && parts[0] == "apis":
		prefix = 3
	default:
		return ""
	}
	rest := parts[prefix:]
	switch {
	case len(rest) == 0:
		return ""
	case rest[0] == "namespaces" && len(rest) >= 3 && !(len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize")):
		rest = rest[:3]
	default:
		rest = rest[:1]
	}
	return "/" + strings.Join(append(parts[:prefix:prefix], rest...), "/")
}

// snapshot is what a list of path holds: its resourceVersion and the name
// and resourceVersion of every item; "" when path cannot be listed.
func (s *Server) snapshot(t testing.TB, path string) string {
	t.Helper()
	if path == "" {
		return ""
	}
	code, body, _ := s.raw(t, http.MethodGet, path, "", "", nil)
	if code != http.StatusOK {
		return ""
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Namespace, Name, ResourceVersion string
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("list %s: %v", path, err)
	}
	var b strings.Builder
	b.WriteString("list " + list.Metadata.ResourceVersion)
	for _, it := range list.Items {
		b.WriteString(", " + it.Metadata.Namespace + "/" + it.Metadata.Name + "@" + it.Metadata.ResourceVersion)
	}
	return b.String()
}
