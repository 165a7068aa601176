package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

var (
	toolMu    sync.Mutex
	toolPaths = map[string]string{}
)

// toolBinary returns a client built from one of the repository's tool
// modules (../tools/<module>, e.g. helm from Helm's own Go module), building
// it on first use into ../.bin/<name>-<hash of the module files>, which later
// runs reuse.
func toolBinary(t *testing.T, module, pkg, name string) string {
	t.Helper()
	toolMu.Lock()
	defer toolMu.Unlock()
	if p, ok := toolPaths[module]; ok {
		return p
	}
	src := filepath.Join("..", "tools", module)
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "tools.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("read tools/%s: %v", module, err)
		}
		h.Write(b)
	}
	bin, err := filepath.Abs(filepath.Join("..", ".bin", name+"-"+hex.EncodeToString(h.Sum(nil))[:12]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
		t.Logf("building %s from tools/%s (first use; cached in .bin/)", pkg, module)
		cmd := exec.Command("go", "build", "-o", tmp, pkg)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
		if err := os.Rename(tmp, bin); err != nil {
			t.Fatal(err)
		}
	}
	toolPaths[module] = bin
	return bin
}
