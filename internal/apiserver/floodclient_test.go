package apiserver_test

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
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/rest"
)

// The flooding client runs in a process of its own, at the lowest CPU
// priority (nice 19), as a tenant elsewhere would: the test measures how
// the server shares itself among clients, and a flood client competing
// with the server and the measured clients for this machine's two cores
// would measure the operating system's scheduler instead. The flood's
// requests still cost the server what they cost.

// floodEnv, when set in the environment of this test binary, makes it the
// flooding client (TestMain): the value is the JSON of floodOrder.
const floodEnv = "SETPOINT_TEST_FLOOD"

// floodOrder is what the flooding child is told.
type floodOrder struct {
	Kubeconfig string // for the server's URL and CA
	Token      string
	Path       string
	Workers    int
}

// floodCounts are the answers the flood got, by kind.
type floodCounts struct{ OK, Rejected, Other int64 }

// startFlood starts the flooding child; it returns once the flood got
// its first 429 (its queues overflow) and gives the function that stops
// it and returns its counts.
func startFlood(t testing.TB, o floodOrder) (stop func() floodCounts) {
	t.Helper()
	order, _ := json.Marshal(o)
	cmd := exec.Command("nice", "-n", "19", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodEnv+"="+string(order))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the flood: %v", err)
	}
	lines := bufio.NewScanner(stdout)
	overflowing := make(chan bool, 1)
	go func() {
		ok := lines.Scan() && lines.Text() == "rejected"
		overflowing <- ok
	}()
	select {
	case ok := <-overflowing:
		if !ok {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the flood ended before its first 429: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the flood got no 429 in 30 s: %s", stderr.String())
	}
	return func() floodCounts {
		stdin.Close() // the child stops on EOF and prints its counts
		var c floodCounts
		if !lines.Scan() || json.Unmarshal(lines.Bytes(), &c) != nil {
			t.Errorf("the flood's counts: %q %s", lines.Text(), stderr.String())
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("the flood: %v: %s", err, stderr.String())
		}
		return c
	}
}

// floodChild is the flooding process: o.Workers loops of GETs of o.Path,
// each honouring Retry-After on a 429 as client-go does, until stdin
// closes. It prints "rejected" at its first 429, and its counts at the
// end.
func floodChild(raw string) int {
	var o floodOrder
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "flood order:", err)
		return 2
	}
	client, base, err := floodHTTPClient(o.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	var okN, rejN, otherN atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, after := floodOnce(ctx, client, base+o.Path, o.Token)
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
	out, _ := json.Marshal(floodCounts{OK: okN.Load(), Rejected: rejN.Load(), Other: otherN.Load()})
	fmt.Println(string(out))
	return 0
}

// floodOnce sends one request; it returns the status (0 on a transport
// error) and the Retry-After (at least a second).
func floodOnce(ctx context.Context, client *http.Client, url, token string) (int, time.Duration) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, time.Duration(max(after, 1)) * time.Second
}

// floodHTTPClient is an HTTP/2 client trusting the CA of the kubeconfig's
// server, and that server's base URL.
func floodHTTPClient(kubeconfig string) (*http.Client, string, error) {
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		return nil, "", fmt.Errorf("flood: %w", err)
	}
	ca := cfg.TLS.CAData
	if len(ca) == 0 && cfg.TLS.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLS.CAFile); err != nil {
			return nil, "", fmt.Errorf("flood: %w", err)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, "", errors.New("flood: the kubeconfig has no CA data")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr}, cfg.Host, nil
}
