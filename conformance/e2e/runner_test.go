package main

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSpecListParses(t *testing.T) {
	specs, err := readSpecs("specs-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 206 {
		t.Fatalf("specs-v1.37.txt has %d specs, want 206", len(specs))
	}
	for _, s := range specs {
		if !strings.Contains(s.Name, "[Conformance]") || s.SIG() == "other" {
			t.Errorf("%s: %q is not a SIG's [Conformance] spec", s.Location, s.Name)
		}
	}
}

func TestFastSubsetIsInTheList(t *testing.T) {
	specs, err := readSpecs("specs-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	fast, err := subset(specs, "fast-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(fast) < 60 {
		t.Fatalf("the CI subset has %d specs, want at least 60", len(fast))
	}
}

func TestSpecListRejectsBadLines(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"no name":   "apps/job.go:12\n",
		"no line":   "apps/job.go\t[sig-apps] x [Conformance]\n",
		"twice":     "apps/job.go:1\t[sig-apps] a\napps/job.go:1\t[sig-apps] b\n",
		"not go":    "apps/job.txt:1\t[sig-apps] a\n",
		"traversal": "../job.go:1\t[sig-apps] a\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readSpecs(p); err == nil {
			t.Errorf("%s: accepted %q", name, body)
		}
	}
}

func TestSubsetNamesOnlyListedSpecs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "subset")
	if err := os.WriteFile(p, []byte("# comment\napps/job.go:99\t[sig-apps] not listed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specs := []spec{{Location: "apps/job.go:1", Name: "[sig-apps] a"}}
	if _, err := subset(specs, p); err == nil {
		t.Fatal("a subset naming a spec outside the list was accepted")
	}
}

// writeSuiteJUnit writes a report in the form ginkgo's JUnit reporter gives
// e2e.test's --report-dir.
func writeSuiteJUnit(t *testing.T, dir, cases string) {
	t.Helper()
	body := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" disabled="0" errors="0" failures="0" time="1.5">
  <testsuite name="Kubernetes e2e suite" package="/" tests="3" disabled="0" skipped="1" errors="0" failures="0" time="1.5">
` + cases + `
  </testsuite>
</testsuites>`
	if err := os.WriteFile(filepath.Join(dir, "junit_01.xml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerdictFromJUnit(t *testing.T) {
	s := spec{Location: "apimachinery/watch.go:52", Name: "[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance]"}
	r := &runner{timeout: time.Minute}
	for _, tc := range []struct {
		name, cases, want string
	}{
		{"passed", `<testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
<testcase name="[It] ` + s.Name + `" classname="Kubernetes e2e suite" status="passed" time="1"></testcase>
<testcase name="[It] [sig-apps] other [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"></testcase>`, "passed"},
		{"failed", `<testcase name="[It] ` + s.Name + `" classname="Kubernetes e2e suite" status="failed" time="1"><failure message="expected x" type="failed">boom</failure></testcase>`, "failed"},
		{"timedout", `<testcase name="[It] ` + s.Name + `" classname="Kubernetes e2e suite" status="timedout" time="1"><failure message="timeout" type="timedout"></failure></testcase>`, "timedout"},
		{"before suite failed", `<testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="failed" time="0.1"><failure message="no nodes" type="failed"></failure></testcase>`, "failed"},
		{"nothing ran", `<testcase name="[It] [sig-apps] other [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"></testcase>`, "error"},
	} {
		dir := t.TempDir()
		writeSuiteJUnit(t, dir, tc.cases)
		got, msg := r.verdict(dir, s, nil, nil)
		if got != tc.want {
			t.Errorf("%s: verdict %q (%s), want %q", tc.name, got, msg, tc.want)
		}
		if got == "failed" && !strings.Contains(msg, "status") && !strings.Contains(msg, "failed") {
			t.Errorf("%s: message %q does not say what failed", tc.name, msg)
		}
	}
	if got, _ := r.verdict(t.TempDir(), s, os.ErrProcessDone, nil); got != "error" {
		t.Errorf("no report: verdict %q, want error", got)
	}
}

func TestReportAndSummary(t *testing.T) {
	results := []result{
		{Spec: spec{"apps/job.go:1", "[sig-apps] a [Conformance]"}, Status: "passed", Duration: 2 * time.Second},
		{Spec: spec{"apps/job.go:2", "[sig-apps] b [Conformance]"}, Status: "failed", Message: "expected\nmore", Duration: time.Second},
		{Spec: spec{"node/pods.go:3", "[sig-node] c [Conformance]"}, Status: "timedout", Message: "slow"},
	}
	got := summary(results, 90*time.Second, "setpoint up --nodes 3")
	want := "conformance: 1 of 3 passed (1 failed, 1 timed out, 0 errors) in 1m30s on setpoint up --nodes 3"
	if got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	counts := countBySIG(results)
	if len(counts) != 2 || counts[0] != (sigCount{"sig-apps", 1, 2}) || counts[1] != (sigCount{"sig-node", 0, 1}) {
		t.Errorf("per SIG %+v", counts)
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := writeJUnit(path, results, time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep junitReport
	if err := xml.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 3 || rep.Failures != 2 || len(rep.Suites) != 2 || rep.Suites[0].Name != "sig-apps" ||
		rep.Suites[0].Failures != 1 || rep.Suites[0].Cases[1].Failure == nil || rep.Suites[0].Cases[1].Failure.Message != "expected" {
		t.Errorf("JUnit report:\n%s", b)
	}
}

func TestSerialSpecs(t *testing.T) {
	specs, err := readSpecs("specs-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	serial := 0
	for _, s := range specs {
		if s.Serial() {
			serial++
		}
	}
	if serial == 0 || serial == len(specs) {
		t.Errorf("%d of %d specs are [Serial]", serial, len(specs))
	}
}

func TestSpecProcessKeepsItsTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	r := &runner{e2eTest: "/bin/true", kubeconfig: "k", kubectl: "kubectl"}
	cmd, err := r.command(context.Background(), spec{Location: "apps/job.go:1", Name: "x"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "TMPDIR=" + filepath.Join(dir, "tmp")
	if cmd.Dir != dir || cmd.Env[len(cmd.Env)-1] != want {
		t.Fatalf("dir %q, env ends %q; want %q and %q", cmd.Dir, cmd.Env[len(cmd.Env)-1], dir, want)
	}
	if st, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || !st.IsDir() {
		t.Fatalf("temporary directory not made: %v", err)
	}
}
