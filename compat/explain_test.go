package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// kubectlPath is the kubectl the explain test runs: $KUBECTL, else the one
// on PATH.
func kubectlPath() string {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	p, _ := exec.LookPath("kubectl")
	return p
}

// TestKubectlExplain runs `kubectl explain <resource> --recursive` against
// both servers for every kind setpoint serves, and compares what it prints
// beside descriptions: the group, kind and version, and every field with
// its type, -required- mark and enum values.
func TestKubectlExplain(t *testing.T) {
	kubectl := kubectlPath()
	if kubectl == "" {
		t.Skip("no kubectl (set KUBECTL)")
	}
	rep := difftest.NewReport(t, env.allow, "openapi", env.sink)
	defer rep.Finish()
	configs := map[string]string{}
	for _, s := range []*difftest.Side{env.ref, env.sp} {
		configs[s.Name] = writeKubeconfig(t, s)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, r := range refResources("get") {
		if !served(r.ID()) {
			continue
		}
		wg.Add(1)
		go func(r apiResource) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := map[string]any{}
			for side, kc := range configs {
				out[side] = explainFields(t, kubectl, kc, r)
			}
			rep.Compare(r.ID()+"/explain", out[env.ref.Name], out[env.sp.Name])
		}(r)
	}
	wg.Wait()
}

// explainFields runs kubectl explain and returns its fields by path.
func explainFields(t *testing.T, kubectl, kubeconfig string, r apiResource) any {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(filepath.Dir(kubeconfig), "cache"),
		"explain", r.Name, "--api-version="+r.GroupVersion(), "--recursive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return map[string]any{"error": strings.TrimSpace(string(out))}
	}
	return parseExplain(string(out))
}

// parseExplain keeps what kubectl explain --recursive says beside
// descriptions: header lines ("GROUP: apps") and each field, keyed by its
// dotted path, with its type, required mark and enum line.
func parseExplain(out string) map[string]any {
	fields := map[string]any{}
	var stack []string
	last := ""
	inDescription := false
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "DESCRIPTION:"):
			inDescription = true
			continue
		case strings.HasPrefix(line, "FIELDS:"):
			inDescription = false
			continue
		case !strings.HasPrefix(line, " ") && strings.Contains(line, ":"):
			k, v, _ := strings.Cut(line, ":")
			fields["header "+k] = strings.TrimSpace(v)
			continue
		case inDescription:
			continue
		case strings.HasPrefix(trimmed, "enum:") && last != "":
			fields[last] = fields[last].(string) + " " + trimmed
			continue
		}
		name, typ, ok := strings.Cut(trimmed, "\t")
		if !ok {
			continue
		}
		depth := (len(line) - len(strings.TrimLeft(line, " "))) / 2
		if depth < 1 {
			continue
		}
		if depth-1 < len(stack) {
			stack = stack[:depth-1]
		}
		stack = append(stack, name)
		last = strings.Join(stack, ".")
		fields[last] = typ
	}
	return fields
}

// writeKubeconfig writes a side's admin kubeconfig into a directory of
// the test's own (beside kubectl's cache for that side).
func writeKubeconfig(t *testing.T, s *difftest.Side) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(env.kubeconfigs[s.Name]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
