package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultAddr     = ":9443"
	DefaultCertName = "tls.crt"
	DefaultKeyName  = "tls.key"
)

// DefaultCertDir is where the server looks for its certificate unless
// told otherwise (where kubebuilder's manifests mount it).
var DefaultCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")

// Options configure a Server; the zero value selects every default.
type Options struct {
	// Addr is the listen address (default ":9443"; "127.0.0.1:0" picks a
	// free port, see Server.Addr).
	Addr string
	// CertDir holds the serving certificate and key, CertName and KeyName
	// (default DefaultCertDir, "tls.crt", "tls.key"). They are read at
	// Start and again whenever either file changes.
	CertDir, CertName, KeyName string
	// GetCertificate, when set, gives the certificate instead of CertDir.
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Server serves admission webhooks over HTTPS. Register handlers, then
// Start it (the manager does). It is safe for concurrent use.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	started chan struct{}

	mu    sync.Mutex
	paths map[string]bool
	addr  string
	run   bool
}

// NewServer returns a server with opts; nothing listens until Start.
func NewServer(opts Options) *Server {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.CertDir == "" {
		opts.CertDir = DefaultCertDir
	}
	if opts.CertName == "" {
		opts.CertName = DefaultCertName
	}
	if opts.KeyName == "" {
		opts.KeyName = DefaultKeyName
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{opts: opts, mux: http.NewServeMux(), started: make(chan struct{}), paths: map[string]bool{}}
}

// Register serves h at path (exactly that path). A path registered twice
// is an error.
func (s *Server) Register(path string, h http.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths[path] {
		return fmt.Errorf("webhook: path %s registered twice", path)
	}
	s.paths[path] = true
	s.mux.Handle("POST "+path, h)
	return nil
}

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.opts.Logger }

// NeedLeaderElection is false: every replica serves webhooks.
func (s *Server) NeedLeaderElection() bool { return false }

// Started is closed once the server listens.
func (s *Server) Started() <-chan struct{} { return s.started }

// Addr returns the address the server listens on once Started, "" before.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Start listens and serves until ctx ends, then stops accepting and waits
// up to 10 s for requests in flight. It fails at once when the certificate
// cannot be read or the address cannot be bound. A Server starts once.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.run {
		s.mu.Unlock()
		return errors.New("webhook: server already started")
	}
	s.run = true
	s.mu.Unlock()
	getCert := s.opts.GetCertificate
	if getCert == nil {
		w, err := newCertFiles(filepath.Join(s.opts.CertDir, s.opts.CertName), filepath.Join(s.opts.CertDir, s.opts.KeyName))
		if err != nil {
			return err
		}
		getCert = w.get
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("webhook: listen on %s: %w", s.opts.Addr, err)
	}
	srv := &http.Server{
		Handler:           s.mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCert},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	s.addr = ln.Addr().String()
	s.mu.Unlock()
	s.opts.Logger.Info("webhook server listening", "addr", ln.Addr().String())
	close(s.started)
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-done:
		return fmt.Errorf("webhook: serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("webhook: shut down: %w", err)
	}
	return nil
}

// certFiles serves a certificate from files, reloading it when either
// file's modification time or size changes.
type certFiles struct {
	certPath, keyPath string

	mu    sync.Mutex
	stamp [2]fileStamp
	cert  *tls.Certificate
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func newCertFiles(certPath, keyPath string) (*certFiles, error) {
	c := &certFiles{certPath: certPath, keyPath: keyPath}
	if _, err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.load() }

// load returns the certificate, reading the files again if they changed;
// a failed reload keeps serving the certificate read before.
func (c *certFiles) load() (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var now [2]fileStamp
	for i, p := range []string{c.certPath, c.keyPath} {
		fi, err := os.Stat(p)
		if err != nil {
			if c.cert != nil {
				return c.cert, nil
			}
			return nil, fmt.Errorf("webhook: serving certificate: %w", err)
		}
		now[i] = fileStamp{fi.ModTime(), fi.Size()}
	}
	if c.cert != nil && now == c.stamp {
		return c.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("webhook: serving certificate: %w", err)
	}
	c.cert, c.stamp = &cert, now
	return c.cert, nil
}
