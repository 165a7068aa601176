package rest

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TokenFileRereadPeriod is how long a token read from BearerTokenFile is
// used before the file is read again, as client-go re-reads it (a
// projected service-account token is rotated by the kubelet in place).
const TokenFileRereadPeriod = time.Minute

// credentials authenticate requests. apply sets them on a request and
// returns what it used (compared by refresh); refresh is called after the
// server answered 401 to a request that carried used, and reports whether
// newer credentials are now in hand (the request is worth sending again).
type credentials interface {
	apply(req *http.Request) (used any, err error)
	refresh(used any) bool
}

// noCredentials sends requests unauthenticated (or with a client
// certificate only).
type noCredentials struct{}

func (noCredentials) apply(*http.Request) (any, error) { return nil, nil }
func (noCredentials) refresh(any) bool                 { return false }

// staticToken is a bearer token fixed for the client's life.
type staticToken string

func (t staticToken) apply(req *http.Request) (any, error) {
	req.Header.Set("Authorization", "Bearer "+string(t))
	return t, nil
}

func (staticToken) refresh(any) bool { return false }

// fileToken is a bearer token read from a file, read again once it is
// older than TokenFileRereadPeriod and after a 401. A failed read keeps
// the token last read (and is reported only when there is none).
type fileToken struct {
	path  string
	clock clock.PassiveClock

	mu     sync.Mutex
	token  string
	readAt time.Time
}

func newFileToken(path, initial string, clk clock.PassiveClock) (*fileToken, error) {
	f := &fileToken{path: path, clock: clk, token: initial, readAt: clk.Now()}
	if initial == "" {
		if _, err := f.read(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// read reads the file; the caller holds mu or owns f.
func (f *fileToken) read() (string, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	f.token, f.readAt = string(trimSpace(b)), f.clock.Now()
	return f.token, nil
}

func (f *fileToken) current() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clock.Since(f.readAt) >= TokenFileRereadPeriod {
		if _, err := f.read(); err != nil && f.token == "" {
			return "", err
		}
	}
	return f.token, nil
}

func (f *fileToken) apply(req *http.Request) (any, error) {
	tok, err := f.current()
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return tok, nil
}

func (f *fileToken) refresh(used any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token != used {
		return true // already re-read since
	}
	tok, err := f.read()
	return err == nil && tok != used
}

// newCredentials picks the credentials cfg describes: an exec plugin, a
// token file (re-read), a fixed token, or none.
func newCredentials(cfg *Config, clk clock.PassiveClock) (credentials, error) {
	switch {
	case cfg.ExecProvider != nil:
		return newExecCredentials(cfg, clk)
	case cfg.BearerTokenFile != "":
		return newFileToken(cfg.BearerTokenFile, cfg.BearerToken, clk)
	case cfg.BearerToken != "":
		return staticToken(cfg.BearerToken), nil
	}
	return noCredentials{}, nil
}
