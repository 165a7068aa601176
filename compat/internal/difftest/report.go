package difftest

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Difference is one differing value between the two answers of a case.
type Difference struct {
	Category string
	Case     string
	Path     string
	Ref, SP  any
}

// String is the one-line form of a difference.
func (d Difference) String() string {
	path := d.Path
	if path == "" {
		path = "(answer)"
	}
	return fmt.Sprintf("%s %s %s: reference %s, setpoint %s",
		d.Category, d.Case, path, Render(d.Ref, 200), Render(d.SP, 200))
}

// Report collects the differences of one test and reports them.
type Report struct {
	t        testing.TB
	allow    *Allowlist
	category string
	sink     *Sink

	mu    sync.Mutex
	diffs []Difference
	cases int
}

// NewReport starts the report of a test of one category; sink (may be
// nil) receives every difference as well.
func NewReport(t testing.TB, allow *Allowlist, category string, sink *Sink) *Report {
	return &Report{t: t, allow: allow, category: category, sink: sink}
}

// Case counts one compared case.
func (r *Report) Case() {
	r.mu.Lock()
	r.cases++
	r.mu.Unlock()
}

// Cases is the number of cases counted so far.
func (r *Report) Cases() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cases
}

// Compare counts a case and records the differences between two decoded
// answers.
func (r *Report) Compare(caseID string, ref, sp any) int {
	r.Case()
	changes := Diff(ref, sp)
	for _, c := range changes {
		r.Add(caseID, c.Path, c.Ref, c.SP)
	}
	return len(changes)
}

// Add records one difference.
func (r *Report) Add(caseID, path string, ref, sp any) {
	r.mu.Lock()
	r.diffs = append(r.diffs, Difference{Category: r.category, Case: caseID, Path: path, Ref: ref, SP: sp})
	r.mu.Unlock()
}

// Finish reports every difference: an error line for each one no
// allowlist entry covers, a log line for the others, and a count.
func (r *Report) Finish() {
	r.t.Helper()
	r.mu.Lock()
	diffs := append([]Difference(nil), r.diffs...)
	r.mu.Unlock()
	sort.SliceStable(diffs, func(i, j int) bool {
		if diffs[i].Case != diffs[j].Case {
			return diffs[i].Case < diffs[j].Case
		}
		return diffs[i].Path < diffs[j].Path
	})
	var bad, allowed int
	var lines []string
	for _, d := range diffs {
		why := r.allow.Match(d)
		r.sink.add(d, why)
		if why == "" {
			bad++
			lines = append(lines, "DIFF "+d.String())
			continue
		}
		allowed++
		if testing.Verbose() {
			r.t.Logf("allowed %s  <- %s", d, why)
		}
	}
	r.sink.Count(r.category, r.Cases())
	if len(lines) > 0 {
		r.t.Errorf("%d difference(s) not in the allowlist:\n%s", bad, strings.Join(lines, "\n"))
	}
	r.t.Logf("%s: %d cases, %d differences (%d allowlisted)", r.category, r.Cases(), len(diffs), allowed)
}

// Sink gathers the differences of a whole run, for a report file.
type Sink struct {
	mu    sync.Mutex
	lines []string
	cases map[string]int
}

// NewSink returns an empty sink.
func NewSink() *Sink { return &Sink{cases: map[string]int{}} }

func (s *Sink) add(d Difference, why string) {
	if s == nil {
		return
	}
	line := "DIFF " + d.String()
	if why != "" {
		line = "allowed " + d.String() + "  <- " + why
	}
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
}

// Count records the number of cases of a category.
func (s *Sink) Count(category string, n int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.cases[category] += n
	s.mu.Unlock()
}

// WriteFile writes the case counts and every difference, one per line.
func (s *Sink) WriteFile(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	cats := make([]string, 0, len(s.cases))
	for c := range s.cases {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		fmt.Fprintf(&b, "cases %s: %d\n", c, s.cases[c])
	}
	lines := append([]string(nil), s.lines...)
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
