package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// sigCount is how many of a SIG's specs passed.
type sigCount struct {
	SIG           string
	Passed, Total int
}

// countBySIG counts results per SIG, in SIG order.
func countBySIG(results []result) []sigCount {
	m := map[string]*sigCount{}
	for _, r := range results {
		c := m[r.Spec.SIG()]
		if c == nil {
			c = &sigCount{SIG: r.Spec.SIG()}
			m[c.SIG] = c
		}
		c.Total++
		if r.Status == "passed" {
			c.Passed++
		}
	}
	out := make([]sigCount, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SIG < out[j].SIG })
	return out
}

// summary is the one-line result:
// "conformance: P of N passed (F failed, T timed out, E errors) in 12m3s on setpoint".
func summary(results []result, wall time.Duration, target string) string {
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	return fmt.Sprintf("conformance: %d of %d passed (%d failed, %d timed out, %d errors) in %s on %s",
		counts["passed"], len(results), counts["failed"], counts["timedout"], counts["error"], wall.Round(time.Second), target)
}

// writeSIGTable prints the counts per SIG.
func writeSIGTable(w io.Writer, results []result) {
	for _, c := range countBySIG(results) {
		fmt.Fprintf(w, "  %-20s %3d of %3d\n", c.SIG, c.Passed, c.Total)
	}
}

// writeResults writes one line per spec: location, status, seconds, name
// (tab-separated, the spec list's order), the input for choosing a subset.
func writeResults(path string, results []result) error {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", r.Spec.Location, r.Status, seconds(r.Duration), r.Spec.Name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// JUnit report, one testsuite per SIG.
type junitReport struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Time     string          `xml:"time,attr"`
	Cases    []junitTestcase `xml:"testcase"`
}

type junitTestcase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes results as a JUnit report to path.
func writeJUnit(path string, results []result, wall time.Duration) error {
	bySIG := map[string]*junitSuite{}
	var order []string
	rep := junitReport{Name: "Kubernetes " + suiteVersion + " conformance", Time: seconds(wall)}
	for _, r := range results {
		sig := r.Spec.SIG()
		s := bySIG[sig]
		if s == nil {
			s = &junitSuite{Name: sig}
			bySIG[sig] = s
			order = append(order, sig)
		}
		tc := junitTestcase{Name: r.Spec.Name, Classname: sig, File: "test/e2e/" + r.Spec.Location,
			Time: seconds(r.Duration), SystemOut: "output: " + r.Output}
		if r.Status != "passed" {
			first, _, _ := strings.Cut(r.Message, "\n")
			tc.Failure = &junitFailure{Type: r.Status, Message: first, Text: r.Message}
			s.Failures++
			rep.Failures++
		}
		s.Tests++
		rep.Tests++
		s.Cases = append(s.Cases, tc)
	}
	sort.Strings(order)
	for _, sig := range order {
		var d float64
		for _, c := range bySIG[sig].Cases {
			var f float64
			fmt.Sscan(c.Time, &f)
			d += f
		}
		bySIG[sig].Time = fmt.Sprintf("%.3f", d)
		rep.Suites = append(rep.Suites, *bySIG[sig])
	}
	b, err := xml.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

// writeSIGComparison prints the counts per SIG of two runs of the same
// specs side by side (setpoint, reference).
func writeSIGComparison(w io.Writer, a, b []result) {
	bc := map[string]sigCount{}
	for _, c := range countBySIG(b) {
		bc[c.SIG] = c
	}
	fmt.Fprintf(w, "  %-20s %10s %10s\n", "SIG", "setpoint", "reference")
	for _, c := range countBySIG(a) {
		r := bc[c.SIG]
		fmt.Fprintf(w, "  %-20s %4d / %3d %4d / %3d\n", c.SIG, c.Passed, c.Total, r.Passed, r.Total)
	}
}
