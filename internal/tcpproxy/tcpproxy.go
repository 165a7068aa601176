package tcpproxy

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to one target until Cut.
type Proxy struct {
	ln     net.Listener
	target string
	// mu guards conns: both sides of every forwarded connection.
	mu    sync.Mutex
	conns []net.Conn
	// wg counts the accept loop and the copy goroutines.
	wg sync.WaitGroup
}

// New starts a proxy on a free loopback port to target, an URL
// ("https://127.0.0.1:6443") or a host:port. The test's end cuts it.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = u.Host
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(out, in); out.Close() })
		p.wg.Go(func() { _, _ = io.Copy(in, out); in.Close() })
	}
}

// Cut closes the listener and every connection and waits for the copies
// to end. Later calls do nothing more.
func (p *Proxy) Cut() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
