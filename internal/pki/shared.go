package pki

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// LoadShared returns the cluster credentials kept in dir — the CA and the
// tokens, in the data-directory layout (pki/ca.crt, pki/ca.key,
// tokens.csv) — creating them on first use. Several API servers may call
// it on the same directory at the same time: creation happens under an
// exclusive lock on dir/.lock, so they all end up with one CA and one token
// set. It returns the CA, the tokens and the admin token.
func LoadShared(dir string) (*CA, *Tokens, string, error) {
	var (
		ca     *CA
		tokens *Tokens
		admin  string
	)
	err := withLock(dir, func() error {
		var err error
		if ca, err = EnsureCA(dir); err != nil {
			return err
		}
		if tokens, admin, err = EnsureTokens(dir); err != nil {
			return err
		}
		// Created here, under the lock, so that every server signs and
		// verifies service-account tokens with the same key.
		_, err = EnsureServiceAccountKey(dir)
		return err
	})
	if err != nil {
		return nil, nil, "", fmt.Errorf("shared credentials in %s: %w", dir, err)
	}
	return ca, tokens, admin, nil
}

// RegisterServer adds url to dir/servers, the list of the API servers that
// share the credentials in dir (one https URL per line, in registration
// order; blank lines and lines starting with # are ignored), unless it is
// already listed, rewrites dir/kubeconfig to list them all (current
// context: url; see WriteKubeconfig), and returns the whole list. Both
// happen under the lock, so the kubeconfig last written names every server
// registered so far. The file may be written by
// hand beforehand, e.g. to list replicas on other hosts; entries are never
// removed automatically (a server that is gone is skipped by clients that
// fail over).
func RegisterServer(dir, url string, caPEM []byte, token string) ([]string, error) {
	var servers []string
	err := withLock(dir, func() error {
		path := filepath.Join(dir, "servers")
		data, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("read %s: %w", path, err)
		}
		servers = parseServers(data)
		if !slices.Contains(servers, url) {
			servers = append(servers, url)
			out := bytes.TrimRight(data, "\n")
			if len(out) > 0 {
				out = append(out, '\n')
			}
			out = append(out, url+"\n"...)
			if err := writeFileAtomic(path, out, 0o644); err != nil {
				return err
			}
		}
		return WriteKubeconfig(filepath.Join(dir, "kubeconfig"), url, servers, caPEM, token)
	})
	if err != nil {
		return nil, fmt.Errorf("register server %s in %s: %w", url, dir, err)
	}
	return servers, nil
}

func parseServers(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}

// withLock runs fn holding an exclusive flock on dir/.lock (created with
// dir if missing). The lock is advisory and per open file, so it also
// serialises goroutines of one process that call it.
func withLock(dir string, fn func() error) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return fn()
}
