package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// suiteVersion is the Kubernetes release e2e.test is built from (tools/e2e
// requires k8s.io/kubernetes at this version).
const suiteVersion = "v1.37.2"

// versionLDFlags stamp the release into both version packages, so that the
// suite reports suiteVersion rather than v0.0.0-master.
func versionLDFlags() string {
	minor := strings.Split(strings.TrimPrefix(suiteVersion, "v"), ".")[1]
	var b strings.Builder
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s", pkg, suiteVersion, pkg, pkg, minor)
	}
	return strings.TrimSpace(b.String())
}

// e2eTestPath is where the build of tools/e2e is cached:
// <root>/.bin/e2e.test-<hash of its go.mod, go.sum, tools.go and ldflags>.
func e2eTestPath(root string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "tools.go"} {
		b, err := os.ReadFile(filepath.Join(root, "tools", "e2e", f))
		if err != nil {
			return "", fmt.Errorf("read tools/e2e: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(versionLDFlags()))
	return filepath.Join(root, ".bin", "e2e.test-"+hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// buildE2ETest returns the cached e2e.test, building it first if it is
// missing. The build holds a lock on .bin/ so that concurrent runs build
// once, and is renamed into place so that nobody sees half a binary.
func buildE2ETest(root string) (string, error) {
	path, err := e2eTestPath(root)
	if err != nil {
		return "", err
	}
	if exists(path) {
		return path, nil
	}
	binDir := filepath.Dir(path)
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := refcluster.Lock(filepath.Join(binDir, "e2e.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if exists(path) { // built by another run while we waited
		return path, nil
	}
	tmp, err := os.MkdirTemp(binDir, "e2e-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	logf("building e2e.test %s from tools/e2e (many minutes on 2 cores; cached in .bin/ afterwards)", suiteVersion)
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-trimpath", "-ldflags", versionLDFlags(),
		"-o", filepath.Join(tmp, "e2e.test"), "k8s.io/kubernetes/test/e2e")
	cmd.Dir = filepath.Join(root, "tools", "e2e")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build e2e.test: %w\n%s", err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "e2e.test"), path); err != nil {
		return "", err
	}
	return path, nil
}

// buildSetpoint builds the repository's setpoint command into dir.
func buildSetpoint(root, dir string) (string, error) {
	out := filepath.Join(dir, "setpoint")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/setpoint")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build setpoint: %w\n%s", err, b)
	}
	return out, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// repoRoot walks up from the working directory to the directory holding
// tools/e2e/go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if exists(filepath.Join(dir, "tools", "e2e", "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run inside the setpoint repository (no tools/e2e/go.mod above the working directory)")
		}
		dir = parent
	}
}
