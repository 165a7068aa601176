package testserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// sharedServiceAccountKey is one service-account signing key (PEM) for
// every server a test process starts on a data directory of its own.
// Generating a 2048-bit RSA key is the largest single cost of a test
// server's start-up (tens of milliseconds to seconds on a loaded machine,
// for hundreds of servers per package run); each server still verifies
// only the tokens of its own ServiceAccounts, whose UIDs another server
// does not have. It is computed once and never modified.
var sharedServiceAccountKey = sync.OnceValues(func() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate service account key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
})

// seedServiceAccountKey writes the shared key where the server looks for
// its own (dataDir/pki/sa.key), unless one is there already (a restart
// keeps its key).
func seedServiceAccountKey(dataDir string) error {
	path := filepath.Join(dataDir, "pki", "sa.key")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	pemBytes, err := sharedServiceAccountKey()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("seed service account key: %w", err)
	}
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		return fmt.Errorf("seed service account key: %w", err)
	}
	return nil
}
