package refcluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
)

// Version is the Kubernetes release the reference binaries are built from
// (tools/reference requires k8s.io/kubernetes at this version).
const Version = "v1.37.2"

// Binaries are the paths of the reference executables.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
	Scheduler         string
}

// commands are the k8s.io/kubernetes commands built from tools/reference,
// by output name.
var commands = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// versionLDFlags stamp the release into both version packages, so that
// /version and the components' own checks report Version rather than
// v0.0.0-master.
func versionLDFlags() string {
	minor := strings.Split(strings.TrimPrefix(Version, "v"), ".")[1]
	var b strings.Builder
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s", pkg, Version, pkg, pkg, minor)
	}
	return strings.TrimSpace(b.String())
}

var (
	findOnce   sync.Once
	found      Binaries
	errFinding error
)

// FindBinaries returns the reference executables. With
// $SETPOINT_REFERENCE_BIN_DIR set they are taken from that directory (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler); otherwise they
// are built on first use from the tools/reference and tools/etcd modules of
// the repository holding the working directory, into its .bin/ directory,
// named after a hash of their sources so that a version change rebuilds
// them. A build holds a lock on .bin/, so concurrent test processes build
// once; the result is renamed into place, so nobody sees half a binary.
func FindBinaries() (Binaries, error) {
	findOnce.Do(func() { found, errFinding = findBinaries() })
	return found, errFinding
}

func findBinaries() (Binaries, error) {
	if dir := os.Getenv("SETPOINT_REFERENCE_BIN_DIR"); dir != "" {
		return BinariesIn(dir)
	}
	etcd, err := etcdtest.Binary()
	if err != nil {
		return Binaries{}, fmt.Errorf("refcluster: etcd: %w", err)
	}
	root, err := repoRoot()
	if err != nil {
		return Binaries{}, err
	}
	paths, err := buildReference(root)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Etcd: etcd, APIServer: paths[0], ControllerManager: paths[1], Scheduler: paths[2]}, nil
}

// BinariesIn names the executables in dir and checks that they exist.
func BinariesIn(dir string) (Binaries, error) {
	b := Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Scheduler:         filepath.Join(dir, "kube-scheduler"),
	}
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler} {
		if _, err := os.Stat(p); err != nil {
			return Binaries{}, fmt.Errorf("refcluster: %w", err)
		}
	}
	return b, nil
}

// buildReference returns the cached builds of commands, building them all
// if any is missing.
func buildReference(root string) ([]string, error) {
	src := filepath.Join(root, "tools", "reference")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "tools.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return nil, fmt.Errorf("refcluster: read tools/reference: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(versionLDFlags()))
	key := hex.EncodeToString(h.Sum(nil))[:12]
	binDir := filepath.Join(root, ".bin")
	paths := make([]string, len(commands))
	for i, c := range commands {
		paths[i] = filepath.Join(binDir, c+"-"+key)
	}
	if allExist(paths) {
		return paths, nil
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, fmt.Errorf("refcluster: %w", err)
	}
	unlock, err := Lock(filepath.Join(binDir, "reference.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if allExist(paths) { // another process built them while we waited
		return paths, nil
	}
	tmp, err := os.MkdirTemp(binDir, "reference-build-")
	if err != nil {
		return nil, fmt.Errorf("refcluster: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-ldflags", versionLDFlags(), "-o", tmp + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, "k8s.io/kubernetes/cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("refcluster: build tools/reference: %w\n%s", err, out)
	}
	for i, c := range commands {
		if err := os.Rename(filepath.Join(tmp, c), paths[i]); err != nil {
			return nil, fmt.Errorf("refcluster: %w", err)
		}
	}
	return paths, nil
}

func allExist(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// Lock takes an exclusive advisory lock on path (created if missing),
// waiting for it: builders of .bin/ (this package, conformance/e2e) hold one
// so that concurrent processes build once.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("refcluster: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("refcluster: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// repoRoot walks up from the working directory (a test runs in its
// package's directory) to the directory holding tools/reference/go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("refcluster: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "reference", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("refcluster: no reference binaries: set SETPOINT_REFERENCE_BIN_DIR or run inside the setpoint repository (tools/reference)")
		}
		dir = parent
	}
}
