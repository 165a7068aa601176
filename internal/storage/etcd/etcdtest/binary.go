package etcdtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// Binary returns the path of an etcd server binary (see the package
// comment), building it on first use if needed.
func Binary() (string, error) {
	binaryOnce.Do(func() { binaryPath, binaryErr = findBinary() })
	return binaryPath, binaryErr
}

func findBinary() (string, error) {
	if p := os.Getenv("SETPOINT_ETCD"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	src := filepath.Join(root, "tools", "etcd")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("etcdtest: read tools/etcd: %w", err)
		}
		h.Write(b)
	}
	bin := filepath.Join(root, ".bin", "etcd-"+hex.EncodeToString(h.Sum(nil))[:12])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("etcdtest: %w", err)
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("etcdtest: build tools/etcd: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("etcdtest: %w", err)
	}
	return bin, nil
}

// repoRoot walks up from the working directory (a test runs in its
// package's directory) to the directory holding tools/etcd/go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("etcdtest: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "etcd", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("etcdtest: no etcd binary: set SETPOINT_ETCD, put etcd on PATH, or run inside the setpoint repository (tools/etcd)")
		}
		dir = parent
	}
}
