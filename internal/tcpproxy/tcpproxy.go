package tcpproxy

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a target until Cut.
type Proxy struct {
	ln net.Listener
	// wg counts the accept loop and the forwarding goroutines.
	wg sync.WaitGroup

	// mu guards what follows.
	mu sync.Mutex
	// target is the host:port new connections are forwarded to.
	target string
	// conns holds both sides of every open forwarded connection.
	conns map[net.Conn]struct{}
	// down: new connections are closed at once (SetDown).
	down bool
	// cut: the proxy has ended (Cut).
	cut bool
}

// New starts a proxy on a free loopback port to target, an URL
// ("https://127.0.0.1:6443") or a host:port. The test's end cuts it.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: hostPort(target), conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.Cut)
	return p
}

// hostPort is the host:port of target, an URL or a host:port.
func hostPort(target string) string {
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		return u.Host
	}
	return target
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the https URL that reaches the target through the proxy.
func (p *Proxy) URL() string { return "https://" + p.Addr() }

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse, target := p.down || p.cut, p.target
		if !refuse {
			// Added under mu, so Cut (which sets cut under mu first)
			// either sees it here or waits for it.
			p.wg.Add(1)
		}
		p.mu.Unlock()
		if refuse {
			in.Close()
			continue
		}
		go p.forward(in, target)
	}
}

// forward dials target for the accepted connection in and copies both ways
// until either side ends or the proxy closes them.
func (p *Proxy) forward(in net.Conn, target string) {
	defer p.wg.Done()
	out, err := net.Dial("tcp", target)
	if err != nil {
		in.Close()
		return
	}
	if !p.track(in, out) {
		in.Close()
		out.Close()
		return
	}
	var copies sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	copies.Go(func() { pipe(out, in) })
	copies.Go(func() { pipe(in, out) })
	copies.Wait()
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// track registers both sides of a connection for Drop and Cut; it refuses
// (false) while the proxy is down or cut, so a connection dialled across
// SetDown(true) or Cut never survives it.
func (p *Proxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down || p.cut {
		return false
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	return true
}

// Drop closes every open connection; new connections are forwarded as
// before (unless the proxy is down).
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// SetDown(true) drops every open connection and closes new ones at once,
// until SetDown(false).
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
	if down {
		p.Drop()
	}
}

// SetTarget forwards later connections to target (an URL or a host:port);
// open ones stay with the old target.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = hostPort(target)
}

// Cut closes the listener and every connection and waits for the
// proxy's goroutines to end. Later calls do nothing more.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.ln.Close()
	p.Drop()
	p.wg.Wait()
}
