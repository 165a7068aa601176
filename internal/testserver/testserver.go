package testserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/rest"
)

// Server is a running API server.
type Server struct {
	// URL is the https base URL, e.g. https://127.0.0.1:41234.
	URL string
	// Token is the admin bearer token.
	Token string
	// Client trusts the server's CA; it sends no credentials by itself.
	Client *http.Client
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// DataDir is the server's data directory.
	DataDir string
	// API is the server itself.
	API *apiserver.Server

	// halt stops the server once: it cancels Run, waits for it to return
	// and reports its error on the given test. Later calls do nothing.
	halt func(t testing.TB)
}

// Options select the storage and tune the server.
type Options struct {
	// Storage is controlplane.StorageMemory (default), StorageBolt or
	// StorageEtcd (with EtcdEndpoints, e.g. from etcdtest).
	Storage string
	// EtcdEndpoints and EtcdPrefix locate the etcd of StorageEtcd.
	EtcdEndpoints []string
	EtcdPrefix    string
	// DataDir defaults to t.TempDir(); pass one to restart on old data.
	DataDir string
	// PKIDir, when set, holds credentials shared with the other servers
	// started with the same PKIDir (one CA, one token set; the kubeconfig
	// of the last started lists them all).
	PKIDir string
	// Tune adjusts the API server configuration.
	Tune func(*apiserver.Config)
	// MetricsAPI serves metrics.k8s.io (see controlplane.Options).
	MetricsAPI bool
	// AuthorizationModes are the server's --authorization-mode list (see
	// controlplane.Options); empty means RBAC.
	AuthorizationModes []string
	// Audit configures auditing (see controlplane.Options): a policy file
	// and a log path audit the server's requests.
	Audit audit.Options
	// EnableAdmissionPlugins and DisableAdmissionPlugins select the
	// admission chain as kube-apiserver's flags do. A bare test server
	// runs no ServiceAccount controller, so, as controller-runtime's envtest
	// does for a bare kube-apiserver, the ServiceAccount plugin is disabled
	// unless DisableAdmissionPlugins is given or EnableAdmissionPlugins
	// names it.
	EnableAdmissionPlugins, DisableAdmissionPlugins []string
}

// admissionFlags returns opts' admission plugin choice, with the
// ServiceAccount plugin off by default.
func admissionFlags(opts Options) (enable, disable []string) {
	if opts.DisableAdmissionPlugins != nil || slices.Contains(opts.EnableAdmissionPlugins, "ServiceAccount") {
		return opts.EnableAdmissionPlugins, opts.DisableAdmissionPlugins
	}
	return opts.EnableAdmissionPlugins, []string{"ServiceAccount"}
}

// Start runs a server until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Storage == "" {
		opts.Storage = controlplane.StorageMemory
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.PKIDir == "" {
		// Servers sharing a PKIDir create their key under its lock.
		if err := seedServiceAccountKey(opts.DataDir); err != nil {
			t.Fatal(err)
		}
	}
	level := slog.LevelWarn
	if os.Getenv("SETPOINT_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	enable, disable := admissionFlags(opts)
	srv, err := controlplane.NewAPIServer(controlplane.Options{
		EnableAdmissionPlugins: enable, DisableAdmissionPlugins: disable,
		DataDir: opts.DataDir, Listen: "127.0.0.1:0", Storage: opts.Storage, Logger: log, Tune: opts.Tune,
		EtcdEndpoints: opts.EtcdEndpoints, EtcdPrefix: opts.EtcdPrefix, PKIDir: opts.PKIDir,
		MetricsAPI: opts.MetricsAPI, AuthorizationModes: opts.AuthorizationModes, Audit: opts.Audit,
	})
	if err != nil {
		t.Fatalf("build API server: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case err := <-done:
		cancel()
		t.Fatalf("API server exited before ready: %v", err)
	case <-srv.Ready():
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("API server not ready after 30s")
	}
	var once sync.Once
	halt := func(t testing.TB) {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("API server: %v", err)
			}
		})
	}
	t.Cleanup(func() { halt(t) })
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: srv.CA().Pool(), MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &Server{
		URL:        "https://" + srv.Addr(),
		Token:      srv.AdminToken(),
		Client:     &http.Client{Transport: tr},
		Kubeconfig: srv.KubeconfigPath(),
		DataDir:    opts.DataDir,
		API:        srv,
		halt: func(t testing.TB) {
			// Idle HTTP/2 connections would hold the graceful shutdown up
			// for a second (the server waits for the GOAWAY to be honoured).
			tr.CloseIdleConnections()
			halt(t)
		},
	}
}

// Stop shuts the server down now, as the end of the test would, and waits
// until Run has returned and the store is closed. It is idempotent, and the
// test's cleanup does nothing more afterwards. To restart on the same data,
// Start again with Options.DataDir (and Storage) of this server: the CA,
// the tokens and, with StorageBolt, the objects persist there; the new
// server listens on another port.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.halt(t)
}

// RESTConfig reads the admin client configuration from s.Kubeconfig,
// without a client-side rate limit (QPS -1: tests are not paced by
// client-go's default of 5 requests per second). Each call returns a fresh
// copy, which the caller may modify (Transport, QPS, MaxRetries, Host...).
func (s *Server) RESTConfig(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(s.Kubeconfig, "")
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	cfg.QPS = -1
	return cfg
}

// RESTClient is an admin client built from RESTConfig; its idle
// connections are closed when the test ends.
func (s *Server) RESTClient(t testing.TB) *rest.Client {
	t.Helper()
	c, err := rest.New(s.RESTConfig(t))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// Do sends an authenticated request with body (nil for none) and content
// type ctype, and returns the response status and body.
func (s *Server) Do(t testing.TB, method, path, ctype string, body io.Reader) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatalf("build request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, path, err)
	}
	return resp.StatusCode, b, resp.Header
}

// As returns a copy of s whose Do sends token instead of the admin's.
func (s *Server) As(token string) *Server {
	c := *s
	c.Token = token
	return &c
}

// ServiceAccountToken creates the ServiceAccount namespace/name (the
// namespace must exist; an existing account is kept) and returns a token
// of it, to act as system:serviceaccount:namespace:name.
func (s *Server) ServiceAccountToken(t testing.TB, namespace, name string) string {
	t.Helper()
	sas := "/api/v1/namespaces/" + namespace + "/serviceaccounts"
	body := `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"` + name + `"}}`
	if code, b, _ := s.Do(t, "POST", sas, "application/json", strings.NewReader(body)); code != http.StatusCreated && code != http.StatusConflict {
		t.Fatalf("create service account %s/%s: %d %s", namespace, name, code, b)
	}
	code, b, _ := s.Do(t, "POST", sas+"/"+name+"/token", "application/json",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`))
	if code != http.StatusCreated {
		t.Fatalf("token of %s/%s: %d %s", namespace, name, code, b)
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &tr); err != nil || tr.Status.Token == "" {
		t.Fatalf("token of %s/%s: %v in %s", namespace, name, err, b)
	}
	return tr.Status.Token
}
