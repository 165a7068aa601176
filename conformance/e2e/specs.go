package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// spec is one line of a spec list: where the spec is (file:line under
// test/e2e, as ginkgo's focus-file takes it) and its full name.
type spec struct {
	Location string // e.g. "apimachinery/watch.go:52"
	Name     string
}

// sigPattern finds the SIG a spec belongs to: the leading [sig-…] of its name.
var sigPattern = regexp.MustCompile(`^\[(sig-[a-z-]+)\]`)

// SIG is the spec's SIG ("sig-apps"), or "other".
func (s spec) SIG() string {
	if m := sigPattern.FindStringSubmatch(s.Name); m != nil {
		return m[1]
	}
	return "other"
}

// Serial reports whether the spec must run alone ([Serial] in its name).
func (s spec) Serial() bool { return strings.Contains(s.Name, "[Serial]") }

// readSpecs parses a spec list: one spec a line, tab-separated file:line
// and name (further columns are ignored); blank lines and lines starting
// with # are comments.
func readSpecs(path string) ([]spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spec list: %w", err)
	}
	defer f.Close()
	var specs []spec
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 2 || !validLocation(cols[0]) || cols[1] == "" {
			return nil, fmt.Errorf("spec list %s:%d: want \"<dir>/<file>.go:<line>\\t<name>\", got %q", path, n, line)
		}
		if seen[cols[0]] {
			return nil, fmt.Errorf("spec list %s:%d: %s listed twice", path, n, cols[0])
		}
		seen[cols[0]] = true
		specs = append(specs, spec{Location: cols[0], Name: cols[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("spec list %s: %w", path, err)
	}
	return specs, nil
}

var locationPattern = regexp.MustCompile(`^[a-z0-9_/-]+\.go:[0-9]+$`)

func validLocation(s string) bool { return locationPattern.MatchString(s) }

// subset keeps the specs whose location the list at path names (the same
// format; only the first column counts). Every entry must be in specs.
func subset(specs []spec, path string) ([]spec, error) {
	want, err := readSpecs(path)
	if err != nil {
		return nil, err
	}
	byLoc := map[string]spec{}
	for _, s := range specs {
		byLoc[s.Location] = s
	}
	out := make([]spec, 0, len(want))
	for _, w := range want {
		s, ok := byLoc[w.Location]
		if !ok {
			return nil, fmt.Errorf("subset %s: %s is not in the spec list", path, w.Location)
		}
		out = append(out, s)
	}
	return out, nil
}
