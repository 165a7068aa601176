package tcpproxy

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers every line with name and the line, until the test
// ends.
func echoServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				s := bufio.NewScanner(c)
				for s.Scan() {
					if _, err := c.Write([]byte(name + " " + s.Text() + "\n")); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// conn is a client connection through the proxy.
type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, p *Proxy) *conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial the proxy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, r: bufio.NewReader(c)}
}

// ask sends line and returns the answer, or the error that ended the
// connection.
func (c *conn) ask(line string) (string, error) {
	if err := c.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return "", err
	}
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	s, err := c.r.ReadString('\n')
	return strings.TrimSuffix(s, "\n"), err
}

func (c *conn) expect(line, want string) {
	c.t.Helper()
	if got, err := c.ask(line); err != nil || got != want {
		c.t.Fatalf("ask %q: %q, %v; want %q", line, got, err, want)
	}
}

// expectClosed: the connection is closed by the proxy (a write may still
// succeed, the read ends).
func (c *conn) expectClosed() {
	c.t.Helper()
	if got, err := c.ask("ping"); err == nil {
		c.t.Fatalf("connection still open: answered %q", got)
	}
}

func TestForwardsToAnURLTarget(t *testing.T) {
	p := New(t, "https://"+echoServer(t, "a"))
	if p.URL() != "https://"+p.Addr() {
		t.Fatalf("URL %s for address %s", p.URL(), p.Addr())
	}
	dial(t, p).expect("hello", "a hello")
}

// TestDropKeepsForwarding: Drop closes the open connections; a new one is
// forwarded.
func TestDropKeepsForwarding(t *testing.T) {
	p := New(t, echoServer(t, "a"))
	c1, c2 := dial(t, p), dial(t, p)
	c1.expect("1", "a 1")
	c2.expect("2", "a 2")
	p.Drop()
	c1.expectClosed()
	c2.expectClosed()
	dial(t, p).expect("3", "a 3")
}

// TestDownRefusesUntilUp: while down, open connections are dropped and new
// ones closed at once; up again, connections are forwarded.
func TestDownRefusesUntilUp(t *testing.T) {
	p := New(t, echoServer(t, "a"))
	c := dial(t, p)
	c.expect("1", "a 1")
	p.SetDown(true)
	c.expectClosed()
	dial(t, p).expectClosed()
	p.SetDown(false)
	dial(t, p).expect("2", "a 2")
}

// TestSetTargetMovesNewConnections: after SetTarget, new connections reach
// the new target while an open one stays with the old.
func TestSetTargetMovesNewConnections(t *testing.T) {
	p := New(t, echoServer(t, "a"))
	old := dial(t, p)
	old.expect("1", "a 1")
	p.SetTarget("https://" + echoServer(t, "b"))
	dial(t, p).expect("2", "b 2")
	old.expect("3", "a 3")
}

// TestCutEndsEverything: Cut closes the open connections, new ones are
// refused, and it returns although the clients never closed theirs; a
// second Cut does nothing more.
func TestCutEndsEverything(t *testing.T) {
	p := New(t, echoServer(t, "a"))
	c := dial(t, p)
	c.expect("1", "a 1")
	p.Cut()
	c.expectClosed()
	if nc, err := net.Dial("tcp", p.Addr()); err == nil {
		nc.Close()
		t.Fatal("the cut proxy still accepts connections")
	}
	p.Cut()
}
