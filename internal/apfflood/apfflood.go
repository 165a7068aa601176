package apfflood

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Order is what the flooding child is told.
type Order struct {
	// URL is the server's base URL; CA the PEM of the CA that signed its
	// serving certificate.
	URL string
	CA  []byte
	// Token is the flooding identity's bearer token; Path what it GETs.
	Token, Path string
	// Workers is the number of concurrent request loops.
	Workers int
}

// Counts are the answers the flood got, by kind.
type Counts struct{ OK, Rejected, Other int64 }

// firstWait bounds how long Start waits for the flood's first 429. The
// flood runs at nice 19 (so that it takes no CPU the server could use):
// beside other busy processes at normal priority, such as other packages'
// tests on a 2-core machine, it gets a few percent of a core, and opening
// its loops took more than 30 s twice in runs at twice CI's load.
const firstWait = 2 * time.Minute

// Start runs argv (the caller's own executable, at nice 19) as the
// flooding child with env set to the Order, and returns once the flood got
// its first 429 — its queues overflow. stop ends the flood and returns its
// counts.
func Start(argv []string, env string, o Order) (stop func() (Counts, error), err error) {
	order, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("apfflood: %w", err)
	}
	cmd := exec.Command("nice", append([]string{"-n", "19"}, argv...)...)
	cmd.Env = append(os.Environ(), env+"="+string(order))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the flood: %w", err)
	}
	lines := bufio.NewScanner(stdout)
	overflowing := make(chan bool, 1)
	go func() { overflowing <- lines.Scan() && lines.Text() == "rejected" }()
	fail := func(msg string) error {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("%s: %s", msg, stderr.String())
	}
	select {
	case ok := <-overflowing:
		if !ok {
			return nil, fail("the flood ended before its first 429")
		}
	case <-time.After(firstWait):
		return nil, fail(fmt.Sprintf("the flood got no 429 in %s", firstWait))
	}
	return func() (Counts, error) {
		stdin.Close() // the child stops on EOF and prints its counts
		var c Counts
		if !lines.Scan() || json.Unmarshal(lines.Bytes(), &c) != nil {
			_ = cmd.Wait()
			return c, fmt.Errorf("the flood's counts: %q %s", lines.Text(), stderr.String())
		}
		if err := cmd.Wait(); err != nil {
			return c, fmt.Errorf("the flood: %w: %s", err, stderr.String())
		}
		return c, nil
	}, nil
}

// Child is the flooding process, given the JSON of its Order; it returns
// the process's exit code.
func Child(raw string) int {
	var o Order
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "flood order:", err)
		return 2
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(o.CA) {
		fmt.Fprintln(os.Stderr, "flood order: no CA certificate")
		return 2
	}
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	ctx, stop := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	c := flood(ctx, client, o)
	out, _ := json.Marshal(c)
	fmt.Println(string(out))
	return 0
}

// flood runs o.Workers request loops until ctx ends.
func flood(ctx context.Context, client *http.Client, o Order) Counts {
	var okN, rejN, otherN atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, after := once(ctx, client, o.URL+o.Path, o.Token)
				switch code {
				case 0:
				case http.StatusOK:
					okN.Add(1)
				case http.StatusTooManyRequests:
					rejN.Add(1)
					first.Do(func() { fmt.Println("rejected") })
					select {
					case <-ctx.Done():
					case <-time.After(after):
					}
				default:
					otherN.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return Counts{OK: okN.Load(), Rejected: rejN.Load(), Other: otherN.Load()}
}

// once sends one request; it returns the status (0 on a transport error)
// and the Retry-After (at least a second).
func once(ctx context.Context, client *http.Client, url, token string) (int, time.Duration) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			time.Sleep(10 * time.Millisecond) // no busy loop on a dead server
		}
		return 0, 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, time.Duration(max(after, 1)) * time.Second
}
