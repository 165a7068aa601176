package core_test

import (
	"bufio"
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

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// kubeletFake records the requests the API server sends to a node's
// kubelet endpoint and answers them: logs as "log of <path>?<query>",
// exec/attach/portForward with a 400 Status, anything else echoed.
type kubeletFake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func startKubelet(t *testing.T, ip string) *kubeletFake {
	t.Helper()
	k := &kubeletFake{}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	k.srv.Listener.Close()
	k.srv.Listener = ln
	k.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

func (k *kubeletFake) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r)
	k.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/containerLogs/"):
		fmt.Fprintf(w, "log of %s?%s\n", r.URL.Path, r.URL.RawQuery)
	case strings.HasPrefix(r.URL.Path, "/exec/"), strings.HasPrefix(r.URL.Path, "/attach/"), strings.HasPrefix(r.URL.Path, "/portForward/"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"refused","reason":"BadRequest","code":400}`)
	default:
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.RequestURI())
	}
}

// last returns the last request the fake received.
func (k *kubeletFake) last(t *testing.T) *http.Request {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.reqs) == 0 {
		t.Fatal("the kubelet received no request")
	}
	return k.reqs[len(k.reqs)-1]
}

// port is the fake's port.
func (k *kubeletFake) port() string {
	_, p, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	return p
}

// globalIP returns a global unicast address of this machine, "" when it
// has none (the proxies refuse loopback backends, as kube-apiserver).
func globalIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// send sends a request with the admin token and returns status and body.
func send(t *testing.T, s *testserver.Server, method, path, ctype, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	code, out, _ := s.Do(t, method, path, ctype, r)
	return code, string(out)
}

// mustSend fails unless the request answers want.
func mustSend(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int) string {
	t.Helper()
	code, out := send(t, s, method, path, ctype, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
	}
	return out
}

// apiStatus is the part of a Status the tests compare.
type apiStatus struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Causes []struct {
			Reason, Message, Field string
		} `json:"causes"`
	} `json:"details"`
}

// expectStatus checks an error answer's code, reason and message.
func expectStatus(t *testing.T, what string, code int, body string, wantCode int, wantReason, wantMsg string) apiStatus {
	t.Helper()
	var st apiStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%s: %d %s: %v", what, code, body, err)
	}
	if code != wantCode || st.Code != wantCode || st.Reason != wantReason || st.Message != wantMsg {
		t.Errorf("%s: %d %s %q, want %d %s %q", what, code, st.Reason, st.Message, wantCode, wantReason, wantMsg)
	}
	return st
}

// upgrade sends an HTTP/1.1 SPDY upgrade request and returns the answer's
// status and body.
func upgrade(t *testing.T, s *testserver.Server, path string) (int, string) {
	t.Helper()
	u, _ := url.Parse(s.URL)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: s.API.CA().Pool(), NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nContent-Length: 0\r\n\r\n",
		path, u.Host, s.Token)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// nodeJSON is a Node with the given addresses ("Type=address") and kubelet
// port.
func nodeJSON(name, port string, addrs ...string) string {
	var as []string
	for _, a := range addrs {
		typ, addr, _ := strings.Cut(a, "=")
		as = append(as, fmt.Sprintf(`{"type":%q,"address":%q}`, typ, addr))
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q},"status":{"addresses":[%s],"daemonEndpoints":{"kubeletEndpoint":{"Port":%s}}}}`,
		name, strings.Join(as, ","), port)
}

// mustListen listens on a free port of ip.
func mustListen(t *testing.T, ip string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
