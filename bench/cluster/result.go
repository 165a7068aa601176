package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/setpoint-dev/setpoint/compat/procstat"
)

// result is one workload run on one side.
type result struct {
	Workload    string             `json:"workload"`
	Side        string             `json:"side"`
	Round       int                `json:"round"`
	Finished    bool               `json:"finished"`
	Seconds     float64            `json:"seconds,omitempty"`
	Progress    string             `json:"progress,omitempty"` // when not finished
	Error       string             `json:"error,omitempty"`
	StartupSec  float64            `json:"startupSeconds"`
	RSSBytes    int64              `json:"rssBytes"`
	CPUSeconds  float64            `json:"cpuSeconds"` // during the workload
	Processes   map[string]procRow `json:"processes,omitempty"`
	LoadAverage string             `json:"loadAverage"`
}

type procRow struct {
	RSSBytes   int64   `json:"rssBytes"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

func numCPU() int { return runtime.NumCPU() }

// runOne starts a fresh cluster of s, runs w on it within timeout, samples
// its processes and stops it.
func runOne(ctx context.Context, s side, w workload, round int, timeout time.Duration) result {
	r := result{Workload: w.name, Side: s.name, Round: round}
	logf("round %d: %s on %s: starting with %d nodes", round, w.name, s.name, w.nodes)
	c, err := s.start(ctx, w.nodes)
	if err != nil {
		r.Error = "start: " + err.Error()
		return r
	}
	defer func() {
		if err := c.stop(); err != nil {
			logf("stop %s: %v", s.name, err)
		}
	}()
	r.StartupSec = c.startup.Seconds()
	before, err := procstat.SampleAll(c.procs)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	err = w.run(runCtx, c.client)
	elapsed := time.Since(start)
	cancel()
	after, serr := procstat.SampleAll(c.procs)
	r.LoadAverage = loadAverage()
	switch {
	case err == nil:
		r.Finished, r.Seconds = true, elapsed.Seconds()
	case errors.Is(err, errNotFinished):
		r.Progress = fmt.Sprintf("%s after %s", strings.TrimPrefix(err.Error(), errNotFinished.Error()+": "), timeout)
	default:
		r.Error = err.Error()
	}
	if serr != nil {
		r.Error = strings.TrimSpace(r.Error + "; sample: " + serr.Error())
		return r
	}
	r.Processes = map[string]procRow{}
	for name, a := range after {
		row := procRow{RSSBytes: a.RSSBytes, CPUSeconds: a.CPUSeconds - before[name].CPUSeconds}
		r.Processes[name] = row
		r.RSSBytes += row.RSSBytes
		r.CPUSeconds += row.CPUSeconds
	}
	return r
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// line is the one-line account of a run, printed as it ends.
func (r result) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "round %d: %s on %s: ", r.Round, r.Workload, r.Side)
	switch {
	case r.Finished:
		fmt.Fprintf(&b, "%.1f s", r.Seconds)
	case r.Error != "" && r.Progress == "":
		fmt.Fprintf(&b, "ERROR %s", r.Error)
		return b.String()
	default:
		fmt.Fprintf(&b, "DID NOT FINISH (%s)", r.Progress)
	}
	fmt.Fprintf(&b, "; RSS %s, CPU %.1f s during the run (start-up %.1f s, load %s)",
		mb(r.RSSBytes), r.CPUSeconds, r.StartupSec, r.LoadAverage)
	if len(r.Processes) > 1 {
		names := make([]string, 0, len(r.Processes))
		for n := range r.Processes {
			names = append(names, n)
		}
		sort.Strings(names)
		var parts []string
		for _, n := range names {
			p := r.Processes[n]
			parts = append(parts, fmt.Sprintf("%s %s/%.1fs", n, mb(p.RSSBytes), p.CPUSeconds))
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, ", "))
	}
	return b.String()
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

// printSummary writes one Markdown table: per workload and side the median
// time of the finished runs, RSS and CPU, and each other side's ratios to
// the base side — the first reference side, or the first side when no
// reference ran (base / side for time: above 1, the side is faster; side /
// base for RSS and CPU: below 1, it uses less).
func printSummary(w io.Writer, workloads []workload, sides []side, results []result) {
	if len(sides) == 0 {
		return
	}
	base := sides[0].name
	for _, s := range sides {
		if s.reference {
			base = s.name
			break
		}
	}
	fmt.Fprintf(w, "Ratios are to %s.\n\n", base)
	fmt.Fprintln(w, "| workload | side | time to done (median) | finished | server RSS after | CPU s during | time ratio base/side | RSS ratio side/base | CPU ratio side/base |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, wl := range workloads {
		ref := summarize(results, wl.name, base)
		for _, s := range sides {
			m := summarize(results, wl.name, s.name)
			timeRatio, rssRatio, cpuRatio := "", "", ""
			if s.name != base && ref.runs > 0 {
				// Memory and CPU compare only when both did the work.
				if m.finished > 0 && ref.finished > 0 {
					timeRatio = fmt.Sprintf("%.2f×", ref.seconds/m.seconds)
					rssRatio = fmt.Sprintf("%.2f", float64(m.rss)/float64(ref.rss))
					cpuRatio = fmt.Sprintf("%.2f", m.cpu/ref.cpu)
				} else {
					timeRatio = "n/a (a side did not finish)"
				}
			}
			t := "did not finish"
			if m.finished > 0 {
				t = fmt.Sprintf("%.1f s", m.seconds)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d of %d | %s | %.1f | %s | %s | %s |\n",
				wl.what, s.name, t, m.finished, m.runs, mb(m.rss), m.cpu, timeRatio, rssRatio, cpuRatio)
		}
	}
}

type summary struct {
	runs, finished int
	seconds, cpu   float64
	rss            int64
}

// summarize takes medians over the runs of one workload on one side: time
// over the finished runs, RSS and CPU over every sampled run.
func summarize(results []result, workload, side string) summary {
	var s summary
	var secs, cpus, rss []float64
	for _, r := range results {
		if r.Workload != workload || r.Side != side {
			continue
		}
		s.runs++
		if r.Finished {
			s.finished++
			secs = append(secs, r.Seconds)
		}
		if r.RSSBytes > 0 {
			rss = append(rss, float64(r.RSSBytes))
			cpus = append(cpus, r.CPUSeconds)
		}
	}
	s.seconds, s.cpu, s.rss = median(secs), median(cpus), int64(median(rss))
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}
