package webhookclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// transports is the cache of TLS transports of a Client: one per CA
// bundle and server name, found by the bundle's bytes (a map lookup
// hashes them far faster than a digest, and copies nothing).
type transports struct {
	mu     sync.RWMutex
	byCA   map[string]map[string]*http.Transport // CA bundle, server name
	dialer *net.Dialer
	opts   Options
}

// get returns the transport of (caBundle, serverName), building it once.
func (t *transports) get(caBundle []byte, serverName string) (*http.Transport, error) {
	t.mu.RLock()
	tr, ok := t.byCA[string(caBundle)][serverName]
	t.mu.RUnlock()
	if ok {
		return tr, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr, ok := t.byCA[string(caBundle)][serverName]; ok {
		return tr, nil
	}
	pool, err := rootCertPool(caBundle)
	if err != nil {
		return nil, &ConfigError{err}
	}
	tr = &http.Transport{
		TLSClientConfig: &tls.Config{
			RootCAs:    pool,
			ServerName: serverName,
			MinVersion: tls.VersionTLS12,
			// HTTP/1.1, as kube-apiserver's webhook client: concurrent
			// requests spread over connections (kubernetes issue 75791).
			NextProtos: []string{"http/1.1"},
		},
		DialContext:           t.dial,
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          t.opts.maxIdle(),
		MaxIdleConnsPerHost:   t.opts.maxIdle(),
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if t.byCA == nil {
		t.byCA = map[string]map[string]*http.Transport{}
	}
	byName := t.byCA[string(caBundle)]
	if byName == nil {
		byName = map[string]*http.Transport{}
		t.byCA[string(caBundle)] = byName
	}
	byName[serverName] = tr
	return tr, nil
}

// dial connects to addr; a Service reference's host name is replaced by
// one of its ready endpoints, found by the request's resolver.
func (t *transports) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if d, ok := ctx.Value(dialKey{}).(*dialTarget); ok && d.hostPort == addr {
		ep, err := d.resolver.ResolveEndpoint(ctx, d.service.Namespace, d.service.Name, d.service.Port)
		if err != nil {
			return nil, err
		}
		addr = ep
	}
	return t.dialer.DialContext(ctx, network, addr)
}

// closeIdle drops the idle connections of every transport.
func (t *transports) closeIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, byName := range t.byCA {
		for _, tr := range byName {
			tr.CloseIdleConnections()
		}
	}
}

// dialKey carries a request's Service reference and resolver to dial.
type dialKey struct{}

type dialTarget struct {
	hostPort string
	service  *ServiceReference
	resolver Resolver
}

// rootCertPool parses a CA bundle as client-go does (nil: system roots).
func rootCertPool(caData []byte) (*x509.CertPool, error) {
	if len(caData) == 0 {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if pool.AppendCertsFromPEM(caData) {
		return pool, nil
	}
	return nil, caDataError(caData)
}

// caDataError words why caData holds no usable certificate, as client-go
// does.
func caDataError(data []byte) error {
	const prefix = "unable to load root certificates: "
	for len(data) > 0 {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return errors.New(prefix + "unable to parse bytes as PEM block")
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("%sfailed to parse certificate: %w", prefix, err)
		}
	}
	return errors.New(prefix + "no valid certificate authority data seen")
}
