package main

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/setpoint-dev/setpoint/bench/cluster/proc"
)

// result is how one spec ended.
type result struct {
	Spec     spec
	Status   string // passed, failed, timedout, or error (the suite itself did not run)
	Duration time.Duration
	Message  string // the failure, for a spec that did not pass
	Output   string // path of the e2e.test output
}

// runner runs specs, each in an e2e.test process of its own.
type runner struct {
	e2eTest    string
	kubeconfig string
	kubectl    string
	outDir     string
	timeout    time.Duration // per spec
	parallel   int
}

// suiteArgs are the flags that make the suite run on simulated nodes.
func (r *runner) suiteArgs(s spec, reportDir string) []string {
	return []string{
		"--kubeconfig=" + r.kubeconfig,
		"--kubectl-path=" + r.kubectl,
		"--provider=skeleton",
		"--allowed-not-ready-nodes=0",
		"--minStartupPods=0",
		"--dump-logs-on-failure=false",
		`--ginkgo.focus=\[Conformance\]`,
		`--ginkgo.skip=\[Disruptive\]`,
		"--ginkgo.focus-file=e2e/" + s.Location,
		"--ginkgo.timeout=" + r.timeout.String(),
		"--ginkgo.no-color",
		"--report-dir=" + reportDir,
	}
}

// runAll runs specs, r.parallel at a time, then the [Serial] ones alone
// (they use the whole cluster: preemption fills the nodes), calling done
// after each; the results are in the order of specs.
func (r *runner) runAll(ctx context.Context, specs []spec, done func(result)) []result {
	var shared, serial []int
	for i, s := range specs {
		if s.Serial() {
			serial = append(serial, i)
		} else {
			shared = append(shared, i)
		}
	}
	results := make([]result, len(specs))
	r.runSome(ctx, specs, shared, r.parallel, results, done)
	r.runSome(ctx, specs, serial, 1, results, done)
	return results
}

// runSome runs specs[i] for each i of which, parallel at a time, into
// results[i].
func (r *runner) runSome(ctx context.Context, specs []spec, which []int, parallel int, results []result, done func(result)) {
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res := r.run(ctx, i, specs[i])
				results[i] = res
				mu.Lock()
				done(res)
				mu.Unlock()
			}
		}()
	}
	for _, i := range which {
		work <- i
	}
	close(work)
	wg.Wait()
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// run runs one spec; the process is killed a minute after the spec's own
// ginkgo timeout, should the suite not end by itself.
func (r *runner) run(ctx context.Context, i int, s spec) result {
	dir := filepath.Join(r.outDir, "specs", fmt.Sprintf("%03d-%s", i, unsafeChars.ReplaceAllString(s.Location, "_")))
	res := result{Spec: s, Output: filepath.Join(dir, "output.txt")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Message = "error", err.Error()
		return res
	}
	out, err := os.Create(res.Output)
	if err != nil {
		res.Status, res.Message = "error", err.Error()
		return res
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(ctx, r.timeout+time.Minute)
	defer cancel()
	cmd, err := r.command(ctx, s, dir)
	if err != nil {
		res.Status, res.Message = "error", err.Error()
		return res
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	runErr := cmd.Run()
	res.Duration = time.Since(begin)
	res.Status, res.Message = r.verdict(dir, s, runErr, ctx.Err())
	return res
}

// command is the e2e.test process of spec s, run in dir with its own
// temporary directory there: the suite leaves files behind in TMPDIR (each
// process, building its spec tree, makes a test-kuberc directory it never
// removes), which then stay with the spec's output instead of piling up in
// the machine's /tmp.
func (r *runner) command(ctx context.Context, s spec, dir string) (*exec.Cmd, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("temporary directory of the spec: %w", err)
	}
	cmd := exec.CommandContext(ctx, r.e2eTest, r.suiteArgs(s, dir)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	return cmd, nil
}

// verdict reads the spec's status from the suite's JUnit report; without
// one it reports why the process ended.
func (r *runner) verdict(dir string, s spec, runErr, ctxErr error) (status, message string) {
	cases, err := readJUnit(filepath.Join(dir, "junit_01.xml"))
	if err != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return "timedout", fmt.Sprintf("e2e.test did not end within %s", r.timeout+time.Minute)
		}
		return "error", fmt.Sprintf("no JUnit report (%v); e2e.test: %v; its output ends:\n%s", err, runErr, proc.TailFile(filepath.Join(dir, "output.txt"), 20))
	}
	var ran []junitCase
	for _, c := range cases {
		if c.Status == "skipped" {
			continue
		}
		if c.Status != "passed" { // a suite node (BeforeSuite…) failing fails the spec
			return c.verdict()
		}
		if strings.Contains(c.Name, s.Name) || strings.Contains(s.Name, strings.TrimPrefix(c.Name, "[It] ")) {
			ran = append(ran, c)
		}
	}
	switch {
	case len(ran) == 0:
		return "error", "the spec did not run (no spec at " + s.Location + " matched the focus); e2e.test: " + fmt.Sprint(runErr)
	case runErr != nil:
		return "failed", fmt.Sprintf("e2e.test: %v; its output ends:\n%s", runErr, proc.TailFile(filepath.Join(dir, "output.txt"), 20))
	}
	return "passed", ""
}

// junitCase is one testcase of ginkgo's JUnit report.
type junitCase struct {
	Name    string `xml:"name,attr"`
	Status  string `xml:"status,attr"`
	Time    string `xml:"time,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"error"`
}

func (c junitCase) verdict() (status, message string) {
	status = c.Status
	if status != "timedout" {
		status = "failed"
	}
	switch {
	case c.Failure != nil:
		message = strings.TrimSpace(c.Failure.Message + "\n" + c.Failure.Text)
	case c.Error != nil:
		message = strings.TrimSpace(c.Error.Message + "\n" + c.Error.Text)
	}
	return status, c.Name + ": " + c.Status + "\n" + message
}

func readJUnit(path string) ([]junitCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Suites []struct {
			Cases []junitCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var cases []junitCase
	for _, s := range doc.Suites {
		cases = append(cases, s.Cases...)
	}
	return cases, nil
}

// seconds formats d for JUnit's time attributes.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
