package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// kwokModule is the KWOK release the reference's nodes come from.
const (
	kwokModule  = "sigs.k8s.io/kwok"
	kwokVersion = "v0.8.0"
)

// kwokStages are KWOK's default fast stages, as kwokctl uses them: nodes
// initialized at once and kept alive with a Lease; pods Running and Ready
// at once, Job pods Succeeded at once, deleted pods gone at once.
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// kwokFiles are the KWOK executable and its stage files.
type kwokFiles struct {
	Binary string
	Stages []string
}

// findKWOK returns $SETPOINT_KWOK or <root>/.bin/kwok-<version>, building
// the latter with `go install` (KWOK's own go.mod and go.sum, checked
// against the checksum database) if it is missing, and the stage files
// from the module cache.
func findKWOK(root string) (kwokFiles, error) {
	dir, err := kwokModuleDir()
	if err != nil {
		return kwokFiles{}, err
	}
	var f kwokFiles
	for _, s := range kwokStages {
		p := filepath.Join(dir, s)
		if _, err := os.Stat(p); err != nil {
			return kwokFiles{}, fmt.Errorf("kwok stage: %w", err)
		}
		f.Stages = append(f.Stages, p)
	}
	if p := os.Getenv("SETPOINT_KWOK"); p != "" {
		f.Binary = p
		return f, nil
	}
	f.Binary = filepath.Join(root, ".bin", "kwok-"+kwokVersion)
	if _, err := os.Stat(f.Binary); err == nil {
		return f, nil
	}
	if err := os.MkdirAll(filepath.Dir(f.Binary), 0o755); err != nil {
		return kwokFiles{}, fmt.Errorf("kwok: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(f.Binary), "kwok-build-")
	if err != nil {
		return kwokFiles{}, fmt.Errorf("kwok: %w", err)
	}
	defer os.RemoveAll(tmp)
	logf("building %s/cmd/kwok@%s (minutes on a loaded machine)", kwokModule, kwokVersion)
	cmd := exec.Command("go", "install", "-trimpath", kwokModule+"/cmd/kwok@"+kwokVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return kwokFiles{}, fmt.Errorf("kwok: go install: %w\n%s", err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "kwok"), f.Binary); err != nil {
		return kwokFiles{}, fmt.Errorf("kwok: %w", err)
	}
	return f, nil
}

// kwokModuleDir downloads (or finds in the module cache) KWOK's module and
// returns its directory.
func kwokModuleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", kwokModule+"@"+kwokVersion)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Dir = os.TempDir() // outside any module, so no go.mod is consulted
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		return "", fmt.Errorf("kwok: go mod download: %w\n%s", err, out)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("kwok: go mod download: %w", err)
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("kwok: go mod download: %q", m.Error)
	}
	return m.Dir, nil
}

// repoRoot walks up from the working directory to the repository root (the
// directory holding tools/reference/go.mod and cmd/setpoint).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "reference", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the setpoint repository: run from bench/cluster")
		}
		dir = parent
	}
}
