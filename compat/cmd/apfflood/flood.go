package main

import (
	"bufio"
	"context"
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

// The flooding client runs in a process of its own at the lowest CPU
// priority (nice 19), as in setpoint's benchmark: a tenant elsewhere,
// whose requests still cost the server what they cost.

// floodEnv, when set, makes this executable the flooding child; the value
// is the JSON of floodOrder.
const floodEnv = "APFFLOOD_CHILD"

type floodOrder struct {
	URL, CAFile, Token, Path string
	Workers                  int
}

type floodCounts struct{ OK, Rejected, Other int64 }

// startFlood starts the flooding child and returns once it got its first
// 429; stop ends it and returns its counts.
func startFlood(o floodOrder) (stop func() (floodCounts, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	order, _ := json.Marshal(o)
	cmd := exec.Command("nice", "-n", "19", self)
	cmd.Env = append(os.Environ(), floodEnv+"="+string(order))
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
	case <-time.After(30 * time.Second):
		return nil, fail("the flood got no 429 in 30 s")
	}
	return func() (floodCounts, error) {
		stdin.Close() // the child stops on EOF and prints its counts
		var c floodCounts
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

// floodChild is the flooding process: o.Workers loops of GETs of o.Path,
// each honouring Retry-After on a 429 as client-go does, until stdin
// closes. It prints "rejected" at its first 429 and its counts at the end.
func floodChild(raw string) int {
	var o floodOrder
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "flood order:", err)
		return 2
	}
	tr, err := transport(o.CAFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client := &http.Client{Transport: tr}
	ctx, stop := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	var okN, rejN, otherN atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, after := floodOnce(ctx, client, o.URL+o.Path, o.Token)
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
